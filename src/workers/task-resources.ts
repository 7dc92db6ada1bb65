// Per-task figures a cgroup gives for almost nothing: CPU time, memory, process count. Read by the
// supervisor for status and by a worker for a task's final CPU time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TaskResources {
  cpuMs: number | null;
  memoryBytes: number | null;
  processes: number | null;
}

export const NO_RESOURCES: TaskResources = { cpuMs: null, memoryBytes: null, processes: null };

function readText(dir: string, name: string): string | null {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch {
    return null;
  }
}

/** Reads the cgroup at `dir`; each figure is null where its controller or file is missing. */
export function readTaskResources(dir: string): TaskResources {
  const usage = /^usage_usec (\d+)$/m.exec(readText(dir, 'cpu.stat') ?? '');
  const memory = readText(dir, 'memory.current');
  const procs = readText(dir, 'cgroup.procs');
  return {
    cpuMs: usage ? Math.round(Number(usage[1]) / 1000) : null,
    memoryBytes: memory === null ? null : Number(memory.trim()),
    processes: procs === null ? null : procs.split('\n').filter((line) => line.length > 0).length,
  };
}
