// Chooses, once at start-up, how tasks are started and contained: a cgroup v2 per task where a
// writable subtree exists, else the shim's process group and subreaper, else (no addon) Node's spawn.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContainmentError } from '../errors.js';
import {
  cgroup2Mount,
  daemonFolderName,
  enableControllers,
  ownCgroupPath,
  probeCgroupFolder,
  removeDaemonFolder,
  SHARED_FOLDER,
} from './cgroups.js';
import { findControllerPlaces, LIMIT_CONTROLLERS, type ControllerPlaces } from './limits.js';
import { loadNative } from './native.js';
import type { SandboxSupport } from './sandbox.js';
import { releaseTaskCpuWeight, setTaskCpuWeight, type TaskCpuWeight } from './cpu-weight.js';
import type { TaskNamespace } from './task-namespace.js';

export type ContainmentMode = 'cgroup' | 'process-group';
export type ContainmentChoice = 'auto' | ContainmentMode | 'node';

/**
 * What this host gives the daemon's tasks: the containment mode in force and what goes with it,
 * set up whole at start-up (the mode and its probes, then the tasks' namespace) and never changed.
 */
export interface HostSetup {
  readonly mode: ContainmentMode;
  readonly spawner: 'native' | 'node';
  /** The folder under which each task gets `task-<run key>`; null without cgroups. */
  readonly cgroupRoot: string | null;
  /** True when cgroupRoot is the daemon's own folder in a cgroup2 mount's shared one, removed at its stop if empty. */
  readonly ownsCgroupRoot?: boolean;
  /** Why this mode, in words (for the log and /healthz). */
  readonly reason: string;
  /** Where task cgroups get each limit's controller, or why they cannot. */
  readonly controllers: ControllerPlaces;
  /** How the tasks' CPU weight is set below the daemon's. */
  readonly cpuWeight: TaskCpuWeight;
  /** What of a run's sandbox this host can enforce. */
  readonly sandbox: SandboxSupport;
  /** The tasks' own PID and mount namespace (or why they share the daemon's), started once the containment is chosen. */
  readonly namespace: TaskNamespace;
}

/** The containment chosen for a host: its setup before the tasks' namespace is started. */
export type ChosenContainment = Omit<HostSetup, 'namespace' | 'sandbox'>;

/** Every cgroup folder a run of a task may have: its v2 one and one in each v1 hierarchy of a limit (for clean-ups). */
export function allTaskCgroupDirs(hostSetup: HostSetup, runKey: string): string[] {
  const v1 = Object.values(hostSetup.controllers).flatMap((place) =>
    'root' in place ? [join(place.root, `task-${runKey}`)] : [],
  );
  const v2 = taskCgroupDir(hostSetup, runKey);
  return v2 === null ? v1 : [v2, ...v1];
}

/**
 * The run keys of the task cgroups in the daemon's own folders (its v1 ones, its v2 one in a shared
 * mount): at start-up, before any task of its own runs, each was left by the last daemon on the
 * state dir, whether the registry still knows the task or not (one set aside after damage does not).
 */
export function leftoverRunKeys(hostSetup: HostSetup): string[] {
  return ownFolders(hostSetup).flatMap((dir) => {
    try {
      return readdirSync(dir).flatMap((name) => (name.startsWith('task-') ? [name.slice('task-'.length)] : []));
    } catch {
      return []; // not made yet
    }
  });
}

/** The daemon's own folders in shared ones: in each v1 hierarchy of a limit, and its v2 one in a shared mount. */
function ownFolders(hostSetup: ChosenContainment): string[] {
  const own = Object.values(hostSetup.controllers).flatMap((place) => ('root' in place ? [place.root] : []));
  return hostSetup.ownsCgroupRoot && hostSetup.cgroupRoot !== null ? [hostSetup.cgroupRoot, ...own] : own;
}

/** The folder of a task's cgroup, or null when tasks get none. */
export function taskCgroupDir(hostSetup: HostSetup, runKey: string): string | null {
  return hostSetup.cgroupRoot === null ? null : join(hostSetup.cgroupRoot, `task-${runKey}`);
}

/**
 * Picks the containment for `choice`, where its limits can be enforced, and sets the tasks' CPU
 * weight; throws when a forced mode is not available here. In a folder that daemons share, the
 * daemon's cgroups go in a folder of its own, named by `stateDir` (cgroups.ts's daemonFolderName).
 */
export function chooseContainment(
  choice: ContainmentChoice,
  cgroupRoot: string | null,
  stateDir: string,
): ChosenContainment {
  const daemonFolder = daemonFolderName(stateDir);
  const chosen = chooseMode(choice, cgroupRoot, daemonFolder);
  const controllers =
    chosen.spawner === 'node'
      ? nowhere('limits need the native spawner, whose shim puts a task in its cgroups')
      : findControllerPlaces(chosen.cgroupRoot, daemonFolder);
  const cpuWeight = setTaskCpuWeight({ ...chosen, controllers, daemonFolder });
  return { ...chosen, controllers, cpuWeight };
}

function nowhere(why: string): ControllerPlaces {
  return Object.fromEntries(LIMIT_CONTROLLERS.map((controller) => [controller, { missing: why }])) as ControllerPlaces;
}

function chooseMode(
  choice: ContainmentChoice,
  cgroupRoot: string | null,
  daemonFolder: string,
): Omit<ChosenContainment, 'controllers' | 'cpuWeight'> {
  if (choice === 'node')
    return {
      mode: 'process-group',
      spawner: 'node',
      cgroupRoot: null,
      reason: 'forced by --containment node: Node child_process spawn, process group only',
    };
  const native = loadNative();
  if ('error' in native) {
    if (choice !== 'auto')
      throw new ContainmentError(`--containment ${choice} needs the native addon: ${native.error}`);
    return {
      mode: 'process-group',
      spawner: 'node',
      cgroupRoot: null,
      reason: `${native.error}; falling back to Node child_process spawn (process group only)`,
    };
  }
  if (choice === 'process-group') {
    return {
      mode: 'process-group',
      spawner: 'native',
      cgroupRoot: null,
      reason: 'forced by --containment process-group: per-task shim as subreaper of its process tree',
    };
  }
  const found = cgroupRoot !== null ? checkCgroupRoot(cgroupRoot) : findCgroupRoot(daemonFolder);
  if ('root' in found)
    return {
      mode: 'cgroup',
      spawner: 'native',
      cgroupRoot: found.root,
      reason: found.reason,
      ownsCgroupRoot: found.shared === true,
    };
  if (choice === 'cgroup') throw new ContainmentError(`--containment cgroup: ${found.error}`);
  return {
    mode: 'process-group',
    spawner: 'native',
    cgroupRoot: null,
    reason: `no writable cgroup v2 subtree (${found.error}): per-task shim as subreaper of its process tree`,
  };
}

type Found = { root: string; reason: string; shared?: boolean } | { error: string };

function checkCgroupRoot(dir: string): Found {
  if (!existsSync(join(dir, 'cgroup.procs'))) return { error: `--cgroup-root ${dir} is not a cgroup v2 folder` };
  return probeCgroupFolder(dir) ?? { root: dir, reason: `--cgroup-root ${dir}` };
}

/** The daemon's own delegated cgroup, else (as root) its own folder in a shared folder of a writable cgroup2 mount. */
function findCgroupRoot(daemonFolder: string): Found {
  const mount = cgroup2Mount();
  if (mount === null) return { error: 'no cgroup2 file system is mounted' };
  const own = ownCgroupPath();
  if (own !== null && own !== '/') {
    const ownDir = join(mount, own);
    if (probeCgroupFolder(ownDir) === null) return delegateOwnCgroup(ownDir);
  }
  const shared = join(mount, SHARED_FOLDER);
  const daemonDir = join(shared, daemonFolder);
  try {
    mkdirSync(daemonDir, { recursive: true });
    enableControllers(shared); // best effort, so the daemon's folder may pass them on to its tasks
  } catch (error) {
    return { error: `cannot create ${daemonDir}: ${(error as Error).message}` };
  }
  return (
    probeCgroupFolder(daemonDir) ?? {
      root: daemonDir,
      reason: `a folder of the writable cgroup2 mount ${mount}`,
      shared: true,
    }
  );
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

/** At a stop: removes the daemon's own folders in shared ones, and each shared one that no other daemon's folder is in. */
export async function removeSharedCgroups(hostSetup: ChosenContainment): Promise<void> {
  await releaseTaskCpuWeight(hostSetup.cpuWeight);
  for (const dir of ownFolders(hostSetup)) removeDaemonFolder(dir);
}

/** For /healthz and the start log: the mode in force, why, and the tasks' CPU weight. */
export function describeContainment(hostSetup: HostSetup) {
  return {
    mode: hostSetup.mode,
    spawner: hostSetup.spawner,
    cgroup_root: hostSetup.cgroupRoot,
    reason: hostSetup.reason,
    task_cpu_weight: hostSetup.cpuWeight,
  };
}

/** In words, for /healthz and the start log: where each limit is enforced, or why it cannot be. */
export function describeControllers(hostSetup: HostSetup): Record<string, string> {
  return Object.fromEntries(
    Object.entries(hostSetup.controllers).map(([controller, place]) => [
      controller,
      'missing' in place
        ? `unavailable: ${place.missing}`
        : place.version === 2
          ? 'cgroup v2'
          : `cgroup v1 ${place.root}`,
    ]),
  );
}
