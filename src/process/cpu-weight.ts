// The tasks' CPU weight, a tenth of the daemon's, set once at start: what keeps the daemon's calls
// answered while tasks keep every core busy (200 tasks flooding their output past the cap, say: each
// costs the CPU of its writer and of its shim, which drops the bytes as fast as they come). Where the
// kernel has it, in order:
// - cgroup v2: cpu.weight on the folder of the task cgroups, beside the daemon's own leaf (systemd's
//   Delegate=yes, a container's cgroup);
// - cgroup v1 (hybrid hosts such as this project's machines, whose v2 tree lacks the cpu
//   controller): a folder `hive-bash-daemon-state-HASH` (named by the state dir as the daemon's
//   folder of task cgroups is, cgroups.ts) inside the daemon's cpu cgroup, with cpu.shares 102, which
//   each spawner joins as it starts. The daemon stays where it is: its threads keep the weight of
//   1024 each that every thread beside them has, the tasks share 102 between them. (Moving the
//   daemon into a folder of its own beside them, as cgroup v2 must, cost each of its wake-ups a walk
//   of two more levels of the scheduler: about 10% more CPU per `status`, bench/status-rate.)
// - else a nice value each spawner takes.
// Every shim and task inherits the weight from its spawner at the fork, so no task pays a write of
// its own (a write to cgroup.procs may wait out an RCU grace period: 5 to 18 ms here).
import { mkdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { dirname, join } from 'node:path';
import { removeCgroup, SHARED_FOLDER } from './cgroups.js';
import type { ControllerPlaces } from './limits.js';

/** How the tasks' CPU weight is set, for the start line and /healthz. */
export type TaskCpuWeight =
  | { via: 'cgroup v2'; dir: string; weight: number }
  | { via: 'cgroup v1'; dir: string; shares: number }
  | { via: 'nice'; nice: number }
  | { via: 'none'; reason: string };

/** cgroup v2's cpu.weight of the tasks' folder: the daemon's own (the default) is 100. */
export const TASK_CPU_WEIGHT = 10;
/** cgroup v1's cpu.shares of the tasks' folder: the daemon's own (the default) is 1024. */
export const TASK_CPU_SHARES = 102;
/** Where no cgroup can be had: the scheduler's weight of nice 10 is 110, of nice 0 (the daemon's) 1024. */
export const TASK_NICE = 10;

const V1_FOLDER_PREFIX = `${SHARED_FOLDER}-`;

/** What the choice looks at: how tasks start, the folder of their v2 cgroups, where cpu limits go. */
export interface WeightPlaces {
  spawner: 'native' | 'node';
  cgroupRoot: string | null;
  controllers: ControllerPlaces;
  /** The name of the daemon's own folders (cgroups.ts's daemonFolderName). */
  daemonFolder: string;
}

/** Sets the tasks' CPU weight the first way this host allows, and says which. */
export function setTaskCpuWeight({ spawner, cgroupRoot, controllers, daemonFolder }: WeightPlaces): TaskCpuWeight {
  if (spawner === 'node')
    return { via: 'none', reason: "Node's spawn (--containment node) has no spawner whose weight tasks inherit" };
  if (cgroupRoot !== null) {
    try {
      // The file is there only where the parent folder gives its children the cpu controller.
      writeFileSync(join(cgroupRoot, 'cpu.weight'), String(TASK_CPU_WEIGHT));
      return { via: 'cgroup v2', dir: cgroupRoot, weight: TASK_CPU_WEIGHT };
    } catch {
      // no cpu controller for the task cgroups' folder: the next way
    }
  }
  const place = controllers.cpu;
  // The cpu limits' folder is `hive-bash-daemon/<daemon folder>` in the daemon's own cpu cgroup:
  // the tasks' folder goes beside `hive-bash-daemon`.
  const tasks = 'root' in place ? makeV1Folder(dirname(dirname(place.root)), daemonFolder) : null;
  if (tasks !== null) return { via: 'cgroup v1', dir: tasks, shares: TASK_CPU_SHARES };
  return { via: 'nice', nice: TASK_NICE };
}

/**
 * Makes this daemon's folder for its spawners in the cgroup v1 cpu folder `parent` (or takes the
 * one a daemon killed on the same state dir left: the state dir's lock says none runs); returns it,
 * or null where that cannot be done. Another daemon's folder, empty or not, is never touched: only
 * its own daemon can tell whether it is about to use it.
 */
function makeV1Folder(parent: string, daemonFolder: string): string | null {
  const dir = join(parent, `${V1_FOLDER_PREFIX}${daemonFolder}`);
  try {
    prepareV1Folder(dir);
    return dir;
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      // never made, or holds a spawner of a daemon killed on this state dir: the next start's
    }
    return null;
  }
}

function prepareV1Folder(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'cpu.shares'), String(TASK_CPU_SHARES));
}

/**
 * Gives a spawner just started (before its first request) the tasks' weight, which every shim and
 * task it forks inherits. Best effort: a spawner that cannot have it runs at the daemon's weight.
 */
export function weighSpawner(pid: number, weight: TaskCpuWeight): void {
  try {
    if (weight.via === 'cgroup v1') {
      prepareV1Folder(weight.dir);
      writeFileSync(join(weight.dir, 'cgroup.procs'), String(pid));
    } else if (weight.via === 'nice') {
      setPriority(pid, weight.nice);
    }
  } catch {
    // the spawner and its tasks keep the daemon's weight
  }
}

/**
 * At the daemon's stop, once its spawners and the tasks' init are killed: its cgroup v1 folder is
 * removed once the last of them has exited (a shim killed with its spawner may take a moment on a
 * busy host).
 */
export async function releaseTaskCpuWeight(weight: TaskCpuWeight): Promise<void> {
  if (weight.via === 'cgroup v1') await removeCgroup(weight.dir);
}
