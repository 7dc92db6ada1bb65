// Per-task figures a cgroup gives for almost nothing: CPU time, memory, process count. Read on the
// main thread for status, and by a worker for a task's final CPU time.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TaskResources {
  cpuMs: number | null;
  memoryBytes: number | null;
  processes: number | null;
}

export const NO_RESOURCES: TaskResources = { cpuMs: null, memoryBytes: null, processes: null };

/** Files of a controller that may not be enabled for task cgroups (cgroup.procs and cpu.stat always exist). */
const CONTROLLER_FILES = new Set(['memory.current']);
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
    if (CONTROLLER_FILES.has(name) && (error as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(dir)) absent.add(name);
    return null;
  }
}

/** Reads the cgroup at `dir`; each figure is null where its controller or file is missing. */
export function readTaskResources(dir: string): TaskResources {
  const memory = readText(dir, 'memory.current');
  return {
    cpuMs: readCpuMs(dir),
    memoryBytes: memory === null ? null : Number(memory.trim()),
    processes: countCgroupProcesses(dir),
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
