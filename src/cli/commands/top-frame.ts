// One frame of top: the running tasks' figures, sorted, under a line of totals.
import type { DaemonClient } from '../client.js';
import { firstLine, formatBytes, formatDuration, renderTable, type Column, type Paint } from '../format.js';
import type { TaskItem } from '../tasks.js';

const MAX_TASKS = 1000;
const COLUMNS: Column[] = [
  { header: 'ID' },
  { header: '%CPU', align: 'right' },
  { header: 'CPU', align: 'right' },
  { header: 'MEM', align: 'right' },
  { header: 'PROCS', align: 'right' },
  { header: 'RUNTIME', align: 'right' },
  { header: 'COMMAND' },
];

export type SortKey = 'cpu' | 'memory';

export interface TopTask extends TaskItem {
  /** Since the last frame in the live view; over the task's life in a single frame (as ps). */
  cpu_percent: number | null;
}

export interface TopFrame {
  at: string;
  /** Tasks by state, from /healthz. */
  counts: Record<string, number>;
  totals: { cpu_percent: number | null; memory_bytes: number | null; processes: number | null };
  tasks: TopTask[];
}

/** Where the last frame left each task's CPU time, for the next frame's %CPU. */
export type CpuSamples = Map<string, { cpuMs: number; at: number }>;

const sum = (values: Array<number | null | undefined>) => {
  const known = values.filter((value): value is number => typeof value === 'number');
  return known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
};

/** %CPU of one task: against the previous sample when there is one, else over its runtime. */
function cpuPercent(task: TaskItem, previous: CpuSamples | null, now: number): number | null {
  if (task.cpu_ms === null || task.cpu_ms === undefined) return null;
  const before = previous?.get(task.id);
  if (before && now > before.at) return (100 * Math.max(0, task.cpu_ms - before.cpuMs)) / (now - before.at);
  return task.runtime_ms ? (100 * task.cpu_ms) / task.runtime_ms : null;
}

/** Reads the daemon's running tasks and counts and makes a frame; updates `samples` when given. */
export async function collectFrame(client: DaemonClient, sort: SortKey, samples: CpuSamples | null): Promise<TopFrame> {
  const [list, health] = await Promise.all([
    client.callTool<{ tasks: TaskItem[] }>('list', { state: 'running', limit: MAX_TASKS }),
    client.getJson<{ tasks: Record<string, number> }>('/healthz'),
  ]);
  const now = Date.now();
  const tasks: TopTask[] = list.tasks.map((task) => ({
    ...task,
    cpu_percent: cpuPercent(task, samples && samples.size > 0 ? samples : null, now),
  }));
  if (samples) {
    samples.clear();
    for (const task of tasks)
      if (typeof task.cpu_ms === 'number') samples.set(task.id, { cpuMs: task.cpu_ms, at: now });
  }
  const key =
    sort === 'memory'
      ? (task: TopTask) => task.memory_bytes ?? -1
      : (task: TopTask) => task.cpu_percent ?? task.cpu_ms ?? -1;
  tasks.sort((a, b) => key(b) - key(a));
  return {
    at: new Date(now).toISOString(),
    counts: health.tasks,
    totals: {
      cpu_percent: sum(tasks.map((task) => task.cpu_percent)),
      memory_bytes: sum(tasks.map((task) => task.memory_bytes)),
      processes: sum(tasks.map((task) => task.processes)),
    },
    tasks,
  };
}

/** The frame as text: the totals, then a table cut to `width` columns and `height` lines (when given). */
export function renderFrame(
  frame: TopFrame,
  url: string,
  sort: SortKey,
  paint: Paint,
  width: number | null,
  height: number | null,
): string {
  const counts =
    Object.entries(frame.counts)
      .filter(([, count]) => count > 0)
      .map(([state, count]) => `${count} ${state}`)
      .join(', ') || 'no tasks';
  const percent = (value: number | null) => (value === null ? '-' : `${value.toFixed(1)}%`);
  const header = [
    `${paint('bold', 'hive-bash top')}  ${url}  ${frame.at.slice(11, 19)} UTC  sorted by ${sort}`,
    `tasks: ${counts}`,
    `running: CPU ${percent(frame.totals.cpu_percent)}  memory ${formatBytes(frame.totals.memory_bytes)}  processes ${frame.totals.processes ?? '-'}`,
    '',
  ];
  if (frame.tasks.length === 0) return `${header.join('\n')}\nno running tasks\n`;
  const shown = height === null ? frame.tasks : frame.tasks.slice(0, Math.max(1, height - header.length - 2));
  const rows = shown.map((task) => [
    task.id,
    percent(task.cpu_percent),
    formatDuration(task.cpu_ms),
    formatBytes(task.memory_bytes),
    task.processes === null || task.processes === undefined ? '-' : String(task.processes),
    formatDuration(task.runtime_ms),
    firstLine(task.command),
  ]);
  const table = renderTable(COLUMNS, rows, width);
  const more = shown.length < frame.tasks.length ? `\n… and ${frame.tasks.length - shown.length} more` : '';
  return `${header.join('\n')}\n${table}${more}\n`;
}
