// cgroup v2 primitives, once: where the hierarchy is mounted, whether a folder takes child cgroups,
// cgroup.kill, and removal; and the name of a daemon's own folder in a folder daemons share. Which containment to use is containment.ts; a task's cgroups are
// made and removed as a whole in task-cgroups.ts (with their limits, limits.ts).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { readCpuMs } from './resources.js';

/** The folder every daemon on a host shares in a cgroup hierarchy, each daemon's own folder in it. */
export const SHARED_FOLDER = 'hive-bash-daemon';

/**
 * The name of a daemon's own folder inside the shared one: `state-` and a hash of its state dir's
 * real path. One daemon holds a state dir at a time (state-lock.ts), so the name is that daemon's,
 * and the next start on the same state dir finds what a crashed one left there, and nothing else.
 */
export function daemonFolderName(stateDir: string): string {
  return `state-${createHash('sha256').update(realpathSync(stateDir)).digest('hex').slice(0, 12)}`;
}

/** Removes a daemon's own folder, then the shared folder it is in, each only if empty (another daemon's may not be). */
export function removeDaemonFolder(dir: string): void {
  for (const folder of [dir, dirname(dir)]) {
    try {
      rmdirSync(folder);
    } catch {
      // holds a task cgroup left for the next start, or another daemon's folder, or gone already
    }
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

/** The daemon's own cgroup v2 path (`/system.slice/x.service`), or null when it has none. */
export function ownCgroupPath(): string | null {
  return cgroupPathOf('self');
}

/** Process `pid`'s cgroup v2 path beneath the mount, or null when it has none or is gone. */
export function cgroupPathOf(pid: number | 'self'): string | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
  } catch {
    return null;
  }
  return /^0::(.*)$/m.exec(text)?.[1] ?? null;
}

/** Null when a child cgroup with cgroup.kill can be created and removed in `dir`, else the reason it cannot. */
export function probeCgroupFolder(dir: string): { error: string } | null {
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

/** Best effort: per-task memory and pids figures need these controllers; containment does not. */
export function enableControllers(dir: string): void {
  const available = readFileSync(join(dir, 'cgroup.controllers'), 'utf8')
    .split(/\s+/)
    .filter((name) => ['cpu', 'memory', 'pids'].includes(name));
  for (const name of available) {
    try {
      writeFileSync(join(dir, 'cgroup.subtree_control'), `+${name}`);
    } catch {
      // not delegated to us; the figure stays unavailable
    }
  }
}

/** Writes cgroup.kill (every process in it gets SIGKILL at once); a cgroup already gone is no error. */
export function killCgroup(dir: string): void {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // gone already
  }
}

const RMDIR_RETRY_MS = 10;
/** How long removal waits for the kernel to let go of a cgroup whose last process was just reaped. */
export const CGROUP_REMOVE_WAIT_MS = 500;

/**
 * Reads the task's CPU time from its cgroup, then removes the cgroup, killing anything still in
 * it (an empty one, the usual case once its task is gone, is removed with no kill). Right after the
 * last process is reaped the kernel may still call it busy (EBUSY) for a moment, so removal is
 * retried for up to `waitMs`; one still busy then (zombies waiting for a parent that never reaps)
 * is left for the next start.
 */
export async function removeCgroup(dir: string, waitMs = CGROUP_REMOVE_WAIT_MS): Promise<number | null> {
  const cpuMs = readCpuMs(dir);
  const deadline = Date.now() + waitMs;
  for (let attempt = 0; ; attempt++) {
    try {
      rmdirSync(dir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EBUSY' || Date.now() >= deadline) break;
      // Busy: something may still run in it. Killed once; the retries wait for the kernel.
      if (attempt === 0) killCgroup(dir);
      else await sleep(RMDIR_RETRY_MS);
    }
  }
  return cpuMs;
}
