// Per-task resource limits through cgroups: where each controller (memory, pids, cpu) can be had
// here (the task's cgroup v2 folder, else a cgroup v1 hierarchy), and which files set a limit.
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { enableControllers, SHARED_FOLDER } from './cgroups.js';

export const LIMIT_CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
export type LimitController = (typeof LIMIT_CONTROLLERS)[number];

/** Where task cgroups get a controller: the v2 task folder, the daemon's folder in a v1 hierarchy, or nowhere (why). */
export type ControllerPlace = { version: 2 } | { version: 1; root: string } | { missing: string };
export type ControllerPlaces = Record<LimitController, ControllerPlace>;

/** A task's limits; null: none. */
export interface TaskLimits {
  memoryLimitMb: number | null;
  maxProcesses: number | null;
  /** CPUs, e.g. 0.5 or 2. */
  cpuLimit: number | null;
}

export const NO_LIMITS: TaskLimits = { memoryLimitMb: null, maxProcesses: null, cpuLimit: null };

/** The ranges a limit may take (a run's or the daemon's). */
export const MAX_MEMORY_LIMIT_MB = 4 * 1024 * 1024;
export const MAX_PROCESSES_LIMIT = 4_194_304;
export const MIN_CPU_LIMIT = 0.01;
export const MAX_CPU_LIMIT = 1024;

/** The controller each limit needs. */
export const LIMIT_CONTROLLER: Record<keyof TaskLimits, LimitController> = {
  memoryLimitMb: 'memory',
  maxProcesses: 'pids',
  cpuLimit: 'cpu',
};

/** A file written in a task's cgroup before its leader joins; an optional one is skipped where the kernel lacks it. */
export interface CgroupSetting {
  name: string;
  value: string;
  optional?: boolean;
}

/** A cgroup the task's leader joins, and the files written in it before it does. */
export interface PlannedCgroup {
  dir: string;
  /** The limit's controller, for a v1 folder; null for the v2 folder. */
  controller: LimitController | null;
  settings: CgroupSetting[];
}

/** A task's cgroups: its v2 folder (kill and figures; v2 limits too), and the v1 folders of its limits. */
export interface TaskCgroupPlan {
  v2: PlannedCgroup | null;
  v1: PlannedCgroup[];
}

const MIB = 1024 * 1024;
const CPU_PERIOD_US = 100_000;
/** memory.high sits this far below memory.max, so a task is throttled and reclaimed before it is killed. */
const MEMORY_HIGH_FRACTION = 0.95;

/**
 * Finds, once at start, where task cgroups can take each controller's limits; in a v1 hierarchy,
 * the daemon's own folder `daemonFolder` (cgroups.ts) in the folder every daemon there shares.
 */
export function findControllerPlaces(v2Root: string | null, daemonFolder: string): ControllerPlaces {
  let v2: Set<string> = new Set();
  if (v2Root !== null) {
    enableControllers(v2Root); // best effort: a delegated subtree has them, a shared mount may not
    v2 = new Set(readTextOr(join(v2Root, 'cgroup.subtree_control'), '').split(/\s+/));
  }
  const mounts = v1Mounts();
  const places = {} as ControllerPlaces;
  for (const controller of LIMIT_CONTROLLERS) {
    if (v2.has(controller)) places[controller] = { version: 2 };
    else places[controller] = findV1Place(controller, mounts.get(controller) ?? null, v2Root !== null, daemonFolder);
  }
  return places;
}

function findV1Place(
  controller: LimitController,
  mount: string | null,
  hasV2: boolean,
  daemonFolder: string,
): ControllerPlace {
  const v2Part = hasV2 ? `the task cgroups' v2 subtree lacks ${controller}` : 'tasks have no cgroup v2 folder';
  if (mount === null) return { missing: `${v2Part} and no cgroup v1 ${controller} hierarchy is mounted` };
  // Under the daemon's own cgroup of that hierarchy: a container's memory cap (its v1 cgroup) still
  // counts its tasks, and a task's OOM stays inside it.
  const root = join(mount, ownV1Path(controller), SHARED_FOLDER, daemonFolder);
  const probe = join(root, `probe-${process.pid}`);
  try {
    mkdirSync(probe, { recursive: true });
    rmdirSync(probe);
    return { version: 1, root };
  } catch (error) {
    return {
      missing: `${v2Part} and the cgroup v1 ${controller} hierarchy at ${mount} is not writable (${(error as Error).message})`,
    };
  }
}

/** The daemon's own cgroup in the v1 hierarchy of `controller` (`/process_api/1337`), from /proc/self/cgroup. */
function ownV1Path(controller: LimitController): string {
  for (const line of readTextOr('/proc/self/cgroup', '').split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers?.split(',').includes(controller) && path !== undefined) return path;
  }
  return '/';
}

/** Each controller's cgroup v1 mount point, from /proc/self/mountinfo. */
function v1Mounts(): Map<string, string> {
  const mounts = new Map<string, string>();
  for (const line of readTextOr('/proc/self/mountinfo', '').split('\n')) {
    const [mountFields, fsFields] = line.split(' - ');
    if (!fsFields?.startsWith('cgroup ')) continue;
    const options = (fsFields.split(' ')[2] ?? '').split(',');
    for (const controller of LIMIT_CONTROLLERS)
      if (options.includes(controller) && !mounts.has(controller)) mounts.set(controller, mountFields!.split(' ')[4]!);
  }
  return mounts;
}

/** The cgroups of one run of a task: `v2Dir` (or none) and a v1 folder for each limit v1 holds. */
export function planTaskCgroups(
  places: ControllerPlaces,
  v2Dir: string | null,
  runKey: string,
  limits: TaskLimits,
): TaskCgroupPlan {
  const v2: PlannedCgroup | null = v2Dir === null ? null : { dir: v2Dir, controller: null, settings: [] };
  const v1: PlannedCgroup[] = [];
  for (const [key, settings] of Object.entries(limitSettings(limits)) as Array<[keyof TaskLimits, VersionedSettings]>) {
    const controller = LIMIT_CONTROLLER[key];
    const place = places[controller];
    if ('missing' in place) continue; // refused before it gets here
    if (place.version === 2 && v2 !== null) v2.settings.push(...settings.v2);
    else if (place.version === 1)
      v1.push({ dir: join(place.root, `task-${runKey}`), controller, settings: settings.v1 });
  }
  return { v2, v1 };
}

type VersionedSettings = { v1: CgroupSetting[]; v2: CgroupSetting[] };

/** The files that set each limit, in v1 and in v2 terms (written in this order). */
function limitSettings(limits: TaskLimits): Partial<Record<keyof TaskLimits, VersionedSettings>> {
  const settings: Partial<Record<keyof TaskLimits, VersionedSettings>> = {};
  const set = (name: string, value: number | string, optional = false): CgroupSetting => ({
    name,
    value: String(value),
    optional,
  });
  if (limits.memoryLimitMb !== null) {
    const bytes = limits.memoryLimitMb * MIB;
    settings.memoryLimitMb = {
      // v1 has neither memory.high nor oom.group: the worker ends the whole task on an OOM kill.
      v1: [set('memory.limit_in_bytes', bytes), set('memory.memsw.limit_in_bytes', bytes, true)],
      v2: [
        set('memory.max', bytes),
        set('memory.high', Math.floor(bytes * MEMORY_HIGH_FRACTION)),
        set('memory.oom.group', 1),
        set('memory.swap.max', 0, true),
      ],
    };
  }
  if (limits.maxProcesses !== null)
    settings.maxProcesses = { v1: [set('pids.max', limits.maxProcesses)], v2: [set('pids.max', limits.maxProcesses)] };
  if (limits.cpuLimit !== null) {
    const quota = Math.max(1000, Math.round(limits.cpuLimit * CPU_PERIOD_US));
    settings.cpuLimit = {
      v1: [set('cpu.cfs_period_us', CPU_PERIOD_US), set('cpu.cfs_quota_us', quota)],
      v2: [set('cpu.max', `${quota} ${CPU_PERIOD_US}`)],
    };
  }
  return settings;
}

function readTextOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}
