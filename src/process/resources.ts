// What a task costs now: CPU time, memory (and its peak, where the kernel keeps one) and processes.
// From the task's cgroup where it has the controller, else summed over its processes from /proc,
// so every containment mode and every host gives figures.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  hasEnvironmentMarker,
  isAlive,
  readProcessEntry,
  readProcessTableInSlices,
  readSubtree,
  type ProcessEntry,
} from './process-table.js';
import { inSlices, PROCESS_STEPS } from './slices.js';

export interface TaskResources {
  cpuMs: number | null;
  memoryBytes: number | null;
  /** The most memory it used at once, where the kernel keeps that (cgroup v2 memory.peak). */
  memoryPeakBytes: number | null;
  processes: number | null;
  /** Forks refused at the task's process limit, where it has one. */
  pidsLimitHits: number | null;
}

export const NO_RESOURCES: TaskResources = {
  cpuMs: null,
  memoryBytes: null,
  memoryPeakBytes: null,
  processes: null,
  pidsLimitHits: null,
};

/** Where a live task's processes are: its cgroup, the subtree of its shim, or its process group. */
export type TaskWhereabouts = { cgroupDir: string } | { shimPid: number } | { pgid: number };

/** Files of a controller that may not be enabled for task cgroups (cgroup.procs and cpu.stat always exist). */
const CONTROLLER_FILES = new Set(['memory.current', 'memory.peak']);
/**
 * Controller files found missing in a task cgroup that exists: the controller is not enabled for
 * task cgroups, which holds for every task cgroup of this daemon, so they are not tried again (a
 * failed read throws, and a throw costs more than the read). A controller enabled later shows
 * after a restart.
 */
const absent = new Set<string>();

function readText(dir: string, name: string): string | null {
  if (absent.has(name)) return null;
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch (error) {
    if (CONTROLLER_FILES.has(name) && (error as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(dir))
      absent.add(name);
    return null;
  }
}

const readNumber = (dir: string, name: string): number | null => {
  const text = readText(dir, name);
  return text === null ? null : Number(text.trim());
};

/** Where a live task without a cgroup of its own has its processes: below its shim, or in its process group. */
export type ProcessWhereabouts = Exclude<TaskWhereabouts, { cgroupDir: string }>;

/** What was read of a task without a cgroup: its figures, and the pids of its living processes. */
export interface TaskProcessesRead {
  resources: TaskResources;
  pids: number[];
}

/**
 * Reads the processes of a live task without a cgroup, a slice at a time (slices.ts): those below
 * its shim (its subtree, whatever their group: the shim is their subreaper), else those of its
 * process group that carry its run `marker` (a reused group id is not the task's).
 */
export function readTaskProcesses(where: ProcessWhereabouts, marker: string): Promise<TaskProcessesRead> {
  return inSlices(async (slices) => {
    if ('shimPid' in where) {
      const { root, below } = await readSubtree(where.shimPid, slices);
      // The shim exits once its subtree is empty; it reaps it all: what ended is in its children's time.
      return root === null
        ? { resources: { ...NO_RESOURCES, processes: 0 }, pids: [] }
        : summed(below, root.childCpuMs);
    }
    const members: ProcessEntry[] = [];
    for (const entry of await readProcessTableInSlices(slices)) {
      if (entry.pgid !== where.pgid) continue;
      if (slices.due(PROCESS_STEPS)) await slices.pause();
      if (hasEnvironmentMarker(entry.pid, marker)) members.push(entry);
    }
    return summed(members, 0);
  });
}

function summed(entries: ProcessEntry[], reapedCpuMs: number): TaskProcessesRead {
  const alive = entries.filter(isAlive);
  return {
    resources: {
      cpuMs: entries.reduce((sum, entry) => sum + entry.cpuMs + entry.childCpuMs, reapedCpuMs),
      memoryBytes: alive.reduce((sum, entry) => sum + entry.rssBytes, 0),
      memoryPeakBytes: null,
      processes: alive.length,
      pidsLimitHits: null,
    },
    pids: alive.map((entry) => entry.pid),
  };
}

/** The pids in the cgroup at `dir`, or null when it cannot be read (gone). */
function readCgroupPids(dir: string): number[] | null {
  const procs = readText(dir, 'cgroup.procs');
  return procs === null
    ? null
    : procs
        .split('\n')
        .filter((line) => line.length > 0)
        .map(Number);
}

/** The pids of the processes in the cgroup at `dir` (none once it is gone). */
export function listCgroupPids(dir: string): number[] {
  return readCgroupPids(dir) ?? [];
}

/** The figures of a live task in the cgroup at `dir`: a few small reads. */
export function readCgroupResources(dir: string): TaskResources {
  const pids = readCgroupPids(dir);
  // Gone: its last process was reaped and its worker removed it (the release brings the CPU time).
  if (pids === null) return { ...NO_RESOURCES, processes: 0 };
  const memory = readNumber(dir, 'memory.current');
  return {
    cpuMs: readCpuMs(dir),
    memoryBytes: memory ?? pids.reduce((sum, pid) => sum + (readProcessEntry(pid)?.rssBytes ?? 0), 0),
    memoryPeakBytes: readNumber(dir, 'memory.peak'),
    processes: pids.length,
    pidsLimitHits: null,
  };
}

/** The CPU time of every process that ran in the cgroup at `dir`, or null when it cannot be read. */
export function readCpuMs(dir: string): number | null {
  const usage = /^usage_usec (\d+)$/m.exec(readText(dir, 'cpu.stat') ?? '');
  return usage ? Math.round(Number(usage[1]) / 1000) : null;
}

/** The processes in the cgroup at `dir`, or null when it cannot be read (gone). */
export function countCgroupProcesses(dir: string): number | null {
  return readCgroupPids(dir)?.length ?? null;
}
