// What a task costs now: CPU time, memory (and its peak, where the kernel keeps one) and processes.
// From the task's cgroup where it has the controller, else summed over its processes from /proc,
// so every containment mode and every host gives figures.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, listDescendants, readProcessEntry, readProcessTable, type ProcessEntry } from './process-table.js';

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

/** One read of /proc shared by the figures of many tasks (a list), taken on first use. */
export class ProcessTableCache {
  private table: ProcessEntry[] | null = null;

  get(): ProcessEntry[] {
    return (this.table ??= readProcessTable());
  }
}

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

/** The figures of a live task; `table` is read only where no cgroup gives them. */
export function readTaskResources(where: TaskWhereabouts, table = new ProcessTableCache()): TaskResources {
  if ('cgroupDir' in where) return readCgroupResources(where.cgroupDir);
  if ('shimPid' in where) {
    const entries = table.get();
    const shim = entries.find((entry) => entry.pid === where.shimPid);
    if (shim === undefined) return { ...NO_RESOURCES, processes: 0 }; // the shim exits once its subtree is empty
    // The shim reaps the whole subtree: what ended is in its children's time, what runs in its own.
    return sumProcesses(listDescendants(entries, shim.pid), shim.childCpuMs);
  }
  return sumProcesses(
    table.get().filter((entry) => entry.pgid === where.pgid),
    0,
  );
}

/** The pids of a live task's processes (not its shim). */
export function listTaskPids(where: TaskWhereabouts, table = new ProcessTableCache()): number[] {
  if ('cgroupDir' in where) {
    return (readText(where.cgroupDir, 'cgroup.procs') ?? '')
      .split('\n')
      .filter((line) => line.length > 0)
      .map(Number);
  }
  const entries = table.get();
  const members =
    'shimPid' in where ? listDescendants(entries, where.shimPid) : entries.filter((entry) => entry.pgid === where.pgid);
  return members.filter(isAlive).map((entry) => entry.pid);
}

function readCgroupResources(dir: string): TaskResources {
  const procs = readText(dir, 'cgroup.procs');
  // Gone: its last process was reaped and its worker removed it (the release brings the CPU time).
  if (procs === null) return { ...NO_RESOURCES, processes: 0 };
  const pids = procs
    .split('\n')
    .filter((line) => line.length > 0)
    .map(Number);
  const memory = readNumber(dir, 'memory.current');
  return {
    cpuMs: readCpuMs(dir),
    memoryBytes: memory ?? pids.reduce((sum, pid) => sum + (readProcessEntry(pid)?.rssBytes ?? 0), 0),
    memoryPeakBytes: readNumber(dir, 'memory.peak'),
    processes: pids.length,
    pidsLimitHits: null,
  };
}

function sumProcesses(entries: ProcessEntry[], reapedCpuMs: number): TaskResources {
  const alive = entries.filter(isAlive);
  return {
    cpuMs: entries.reduce((sum, entry) => sum + entry.cpuMs + entry.childCpuMs, reapedCpuMs),
    memoryBytes: alive.reduce((sum, entry) => sum + entry.rssBytes, 0),
    memoryPeakBytes: null,
    processes: alive.length,
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
  const procs = readText(dir, 'cgroup.procs');
  return procs === null ? null : procs.split('\n').filter((line) => line.length > 0).length;
}
