// One run of a task's cgroups as a whole: created with their limits before the spawn, read for what
// the limits did (OOM kills, refused forks, the memory peak), and removed once the task is gone.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeCgroup } from './cgroups.js';
import type { PlannedCgroup, TaskCgroupPlan } from './limits.js';

/** What a task's limits did, read from its cgroups; null where no cgroup keeps the figure. */
export interface LimitFigures {
  /** Processes the kernel's OOM killer ended inside the task's memory limit. */
  oomKills: number | null;
  /** Forks and clones refused at pids.max. */
  pidsLimitHits: number | null;
  memoryBytes: number | null;
  memoryPeakBytes: number | null;
}

export const NO_LIMIT_FIGURES: LimitFigures = {
  oomKills: null,
  pidsLimitHits: null,
  memoryBytes: null,
  memoryPeakBytes: null,
};

/** Creates every cgroup of `plan` and writes its settings; throws the failing call's error. */
export function createTaskCgroups(plan: TaskCgroupPlan): void {
  for (const cgroup of cgroupsOf(plan)) {
    // recursive: another daemon that shared the root may have removed it at its stop.
    mkdirSync(cgroup.dir, { recursive: true });
    for (const { name, value, optional } of cgroup.settings) {
      try {
        writeFileSync(join(cgroup.dir, name), value);
      } catch (error) {
        if (!(optional && (error as NodeJS.ErrnoException).code === 'ENOENT')) throw error;
      }
    }
  }
}

/** The folders the shim's leader joins besides its v2 cgroup (`-j DIR`). */
export function joinedDirs(plan: TaskCgroupPlan): string[] {
  return plan.v1.map((cgroup) => cgroup.dir);
}

/** Removes every cgroup of `plan` (killing what is still in the v2 one); returns the v2 cgroup's CPU time. */
export async function removeTaskCgroups(plan: TaskCgroupPlan): Promise<number | null> {
  const [cpuMs] = await Promise.all([
    plan.v2 === null ? null : removeCgroup(plan.v2.dir),
    ...plan.v1.map((cgroup) => removeCgroup(cgroup.dir)),
  ]);
  return cpuMs;
}

/**
 * Removes whichever of `dirs` exist (killing what is in a v2 one), all at once: a clean-up where no
 * plan is at hand. Each waits up to `waitMs` for its processes to die and be reaped.
 */
export async function removeTaskCgroupDirs(dirs: string[], waitMs?: number): Promise<void> {
  await Promise.all(dirs.filter((dir) => existsSync(dir)).map((dir) => removeCgroup(dir, waitMs)));
}

/** What the limits did so far (cheap: a few small reads, only in the cgroups that hold a limit). */
export function readLimitFigures(plan: TaskCgroupPlan): LimitFigures {
  const figures = { ...NO_LIMIT_FIGURES };
  const memory = plan.v1.find((cgroup) => cgroup.controller === 'memory');
  const pids = plan.v1.find((cgroup) => cgroup.controller === 'pids');
  if (memory) {
    figures.oomKills = readKeyed(memory, 'memory.oom_control', 'oom_kill');
    figures.memoryBytes = readNumber(memory, 'memory.usage_in_bytes');
    figures.memoryPeakBytes = readNumber(memory, 'memory.max_usage_in_bytes');
  } else if (plan.v2?.settings.some((setting) => setting.name === 'memory.max')) {
    const kills = readKeyed(plan.v2, 'memory.events', 'oom_kill');
    const groupKills = readKeyed(plan.v2, 'memory.events', 'oom_group_kill');
    figures.oomKills = kills === null && groupKills === null ? null : Math.max(kills ?? 0, groupKills ?? 0);
    figures.memoryPeakBytes = readNumber(plan.v2, 'memory.peak');
  }
  const pidsCgroup = pids ?? (plan.v2?.settings.some((setting) => setting.name === 'pids.max') ? plan.v2 : undefined);
  if (pidsCgroup) figures.pidsLimitHits = readKeyed(pidsCgroup, 'pids.events', 'max');
  return figures;
}

function cgroupsOf(plan: TaskCgroupPlan): PlannedCgroup[] {
  return plan.v2 === null ? plan.v1 : [plan.v2, ...plan.v1];
}

function readText(cgroup: PlannedCgroup, name: string): string | null {
  try {
    return readFileSync(join(cgroup.dir, name), 'utf8');
  } catch {
    return null;
  }
}

function readNumber(cgroup: PlannedCgroup, name: string): number | null {
  const text = readText(cgroup, name);
  return text === null ? null : Number(text.trim());
}

/** The value of `key` in a flat keyed file (`oom_kill 2`), or null. */
function readKeyed(cgroup: PlannedCgroup, name: string, key: string): number | null {
  const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(readText(cgroup, name) ?? '');
  return match ? Number(match[1]) : null;
}
