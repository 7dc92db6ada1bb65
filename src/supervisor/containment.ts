// Chooses, once at start-up, how tasks are started and contained: a cgroup v2 per task where a
// writable subtree exists, else the shim's process group and subreaper, else (no addon) Node's spawn.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadNative } from '../workers/native.js';

export type ContainmentMode = 'cgroup' | 'process-group';
export type ContainmentChoice = 'auto' | ContainmentMode | 'node';

export interface Containment {
  mode: ContainmentMode;
  spawner: 'native' | 'node';
  /** The folder under which each task gets `task-<run key>`; null without cgroups. */
  cgroupRoot: string | null;
  /** True when the daemon created cgroupRoot in a shared cgroup2 mount, to be removed at its stop if empty. */
  ownsCgroupRoot?: boolean;
  /** Why this mode, in words (for the log and /healthz). */
  reason: string;
}

/** The folder of a task's cgroup, or null when tasks get none. */
export function taskCgroupDir(containment: Containment, runKey: string): string | null {
  return containment.cgroupRoot === null ? null : join(containment.cgroupRoot, `task-${runKey}`);
}

/** Picks the containment for `choice`; throws when a forced mode is not available here. */
export function chooseContainment(choice: ContainmentChoice, cgroupRoot: string | null): Containment {
  if (choice === 'node') return { mode: 'process-group', spawner: 'node', cgroupRoot: null, reason: 'forced by --containment node: Node child_process spawn, process group only' };
  const native = loadNative();
  if ('error' in native) {
    if (choice !== 'auto') throw new Error(`--containment ${choice} needs the native addon: ${native.error}`);
    return { mode: 'process-group', spawner: 'node', cgroupRoot: null, reason: `${native.error}; falling back to Node child_process spawn (process group only)` };
  }
  if (choice === 'process-group') {
    return { mode: 'process-group', spawner: 'native', cgroupRoot: null, reason: 'forced by --containment process-group: per-task shim as subreaper of its process tree' };
  }
  const found = cgroupRoot !== null ? checkCgroupRoot(cgroupRoot) : findCgroupRoot();
  if ('root' in found) return { mode: 'cgroup', spawner: 'native', cgroupRoot: found.root, reason: found.reason, ownsCgroupRoot: found.shared === true };
  if (choice === 'cgroup') throw new Error(`--containment cgroup: ${found.error}`);
  return { mode: 'process-group', spawner: 'native', cgroupRoot: null, reason: `no writable cgroup v2 subtree (${found.error}): per-task shim as subreaper of its process tree` };
}

type Found = { root: string; reason: string; shared?: boolean } | { error: string };

function checkCgroupRoot(dir: string): Found {
  if (!existsSync(join(dir, 'cgroup.procs'))) return { error: `--cgroup-root ${dir} is not a cgroup v2 folder` };
  return probeWritable(dir) ?? { root: dir, reason: `--cgroup-root ${dir}` };
}

/** The daemon's own delegated cgroup, else (as root) a folder in a writable cgroup2 mount. */
function findCgroupRoot(): Found {
  const mount = cgroup2Mount();
  if (mount === null) return { error: 'no cgroup2 file system is mounted' };
  const own = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  if (own !== undefined && own !== '/') {
    const ownDir = join(mount, own);
    if (probeWritable(ownDir) === null) return delegateOwnCgroup(ownDir);
  }
  const shared = join(mount, 'hive-bash-daemon');
  try {
    mkdirSync(shared, { recursive: true });
  } catch (error) {
    return { error: `cannot create ${shared}: ${(error as Error).message}` };
  }
  return probeWritable(shared) ?? { root: shared, reason: `a folder of the writable cgroup2 mount ${mount}`, shared: true };
}

/**
 * Under systemd's Delegate=yes the daemon owns its cgroup; a cgroup with processes cannot also give
 * controllers to children, so the daemon moves itself into a leaf and tasks go beside it.
 */
function delegateOwnCgroup(ownDir: string): Found {
  try {
    const leaf = join(ownDir, 'supervisor');
    mkdirSync(leaf, { recursive: true });
    writeFileSync(join(leaf, 'cgroup.procs'), String(process.pid));
    const tasks = join(ownDir, 'tasks');
    mkdirSync(tasks, { recursive: true });
    enableControllers(ownDir);
    enableControllers(tasks);
    return { root: tasks, reason: `the daemon's delegated cgroup ${ownDir}` };
  } catch (error) {
    return { error: `cannot use the delegated cgroup ${ownDir}: ${(error as Error).message}` };
  }
}

/** At a stop: removes the shared folder the daemon created, unless another daemon's tasks still use it. */
export function releaseContainment(containment: Containment): void {
  if (!containment.ownsCgroupRoot || containment.cgroupRoot === null) return;
  try {
    rmdirSync(containment.cgroupRoot);
  } catch {
    // still in use by another daemon's tasks, or already gone
  }
}

/** Best effort: per-task memory and pids figures need these controllers; containment does not. */
function enableControllers(dir: string): void {
  const available = readFileSync(join(dir, 'cgroup.controllers'), 'utf8').split(/\s+/).filter((name) => ['cpu', 'memory', 'pids'].includes(name));
  for (const name of available) {
    try {
      writeFileSync(join(dir, 'cgroup.subtree_control'), `+${name}`);
    } catch {
      // not delegated to us; the figure stays unavailable
    }
  }
}

/** Null when a child cgroup with cgroup.kill can be created and removed in `dir`, else the reason it cannot. */
function probeWritable(dir: string): { error: string } | null {
  const probe = join(dir, `probe-${process.pid}`);
  try {
    mkdirSync(probe);
    const killable = existsSync(join(probe, 'cgroup.kill'));
    rmdirSync(probe);
    return killable ? null : { error: 'this kernel has no cgroup.kill (Linux 5.14 or later has it)' };
  } catch (error) {
    return { error: `cannot create cgroups in ${dir}: ${(error as Error).message}` };
  }
}

/** Where the cgroup v2 file system is mounted, or null. */
export function cgroup2Mount(): string | null {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [mountFields, fsFields] = line.split(' - ');
    if (fsFields?.startsWith('cgroup2 ')) return mountFields!.split(' ')[4]!;
  }
  return null;
}
