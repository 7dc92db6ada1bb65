// A cgroup v2 folder per test daemon, so that its tasks' cgroups can be found, checked and
// removed at teardown without touching any other daemon's.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { cgroup2Mount } from '../../src/process/cgroups.js';
import { dirname, join } from 'node:path';

/** The cgroup2 mount if this process may create cgroups in it, else null (tests then use process-group mode). */
export function writableCgroup2Mount(): string | null {
  const mount = cgroup2Mount();
  if (mount === null) return null;
  try {
    const probe = join(mount, `hive-bash-probe-${process.pid}`);
    mkdirSync(probe);
    rmdirSync(probe);
    return mount;
  } catch {
    return null;
  }
}

/** Creates `<mount>/hive-bash-test/<name>`; null when cgroups are not writable here. */
export function createTestCgroupRoot(name: string): string | null {
  const mount = writableCgroup2Mount();
  if (mount === null) return null;
  const root = join(mount, 'hive-bash-test', name);
  mkdirSync(root, { recursive: true });
  return root;
}

/** The task cgroups under `root`. */
export function listTaskCgroups(root: string): string[] {
  return existsSync(root)
    ? readdirSync(root)
        .filter((name) => name.startsWith('task-'))
        .map((name) => join(root, name))
    : [];
}

/** Kills everything in each task cgroup under `root`, then removes them and `root`. */
export async function removeTestCgroupRoot(root: string): Promise<void> {
  for (const dir of listTaskCgroups(root)) {
    try {
      writeFileSync(join(dir, 'cgroup.kill'), '1');
    } catch {
      // already gone
    }
  }
  for (const dir of [...listTaskCgroups(root), root]) {
    for (let attempt = 0; attempt < 100 && existsSync(dir); attempt++) {
      try {
        rmdirSync(dir);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
  try {
    rmdirSync(dirname(root)); // the shared parent, once no other test daemon uses it
  } catch {
    // still in use
  }
}

/** The cgroup v1 mount of the cpu controller, from /proc/self/mountinfo, or null. */
export function cpuV1Mount(): string | null {
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const [mount, fs] = line.split(' - ');
    if (fs?.startsWith('cgroup ') && (fs.split(' ')[2] ?? '').split(',').includes('cpu')) return mount!.split(' ')[4]!;
  }
  return null;
}

/**
 * Removes the cgroup v1 cpu folder a daemon gone by SIGKILL left (src/process/cpu-weight.ts: its
 * `hive-bash-daemon-PID` where its cpu cgroup was, which is this process's); a clean stop removes it.
 */
export async function removeCpuWeightFolder(daemonPid: number): Promise<void> {
  const mount = cpuV1Mount();
  const own = /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1];
  if (mount === null || own === undefined) return;
  const unit = join(mount, own, `hive-bash-daemon-${daemonPid}`);
  // Its spawners die a moment after their threads (PR_SET_PDEATHSIG): a busy folder is tried again.
  for (const dir of [join(unit, 'supervisor'), join(unit, 'spawners'), unit]) {
    for (let attempt = 0; attempt < 50 && existsSync(dir); attempt++) {
      try {
        rmdirSync(dir);
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
}
