// list (ps): the newest tasks as a table, one line each, the command cut to the terminal's width.
import { MAX_LIST_LIMIT } from '../../shared/tool-bounds.js';
import { TASK_STATES } from '../../shared/task-states.js';
import { parseChoice, parseCount } from '../arguments.js';
import { writeJson, type Command } from '../command.js';
import { firstLine, formatAge, formatBytes, formatDuration, renderTable, stateStyle, type Column } from '../format.js';
import type { TaskItem } from '../tasks.js';

const COLUMNS: Column[] = [
  { header: 'ID' },
  { header: 'STATE' },
  { header: 'AGE', align: 'right' },
  { header: 'RUNTIME', align: 'right' },
  { header: 'CPU', align: 'right' },
  { header: 'MEM', align: 'right' },
  { header: 'PROCS', align: 'right' },
  { header: 'EXIT', align: 'right' },
  { header: 'COMMAND' },
];

/** A task's line of the table, in COLUMNS' order. */
function tableRow(task: TaskItem, now: number): string[] {
  return [
    task.id,
    task.state,
    formatAge(task.created_at ?? task.started_at, now),
    formatDuration(task.runtime_ms),
    formatDuration(task.cpu_ms),
    formatBytes(task.memory_bytes),
    task.processes === null || task.processes === undefined ? '-' : String(task.processes),
    (task.exit_code ?? null) === null ? (task.signal ?? '') : String(task.exit_code),
    firstLine(task.command),
  ];
}

export const listCommand: Command = {
  name: 'list',
  aliases: ['ps'],
  summary: 'the newest tasks, one line each',
  usage: 'hive-bash list [--state STATE] [--limit N]',
  help: [
    `--state STATE   only tasks in STATE: ${TASK_STATES.join(', ')}`,
    `--limit N       at most N tasks, 1 to ${MAX_LIST_LIMIT} (default 50)`,
    'Columns: ID, STATE, AGE (since created), RUNTIME, CPU (time used), MEM (now), PROCS, EXIT',
    "(code, or the signal that ended it), COMMAND (its first line, cut to the terminal's width).",
    '- where the daemon has no figure (a pending task; memory once a task has ended).',
  ],
  options: { state: { type: 'string' }, limit: { type: 'string', short: 'n' } },
  async run(context, values) {
    const state = parseChoice('--state', values.state as string | undefined, TASK_STATES);
    const limit = parseCount('--limit', values.limit as string | undefined, MAX_LIST_LIMIT) ?? 50;
    const result = await context.client.callTool<{ tasks: TaskItem[] }>('list', { limit, ...(state ? { state } : {}) });
    if (context.json) {
      writeJson(context, result);
      return 0;
    }
    if (result.tasks.length === 0) {
      context.write(state ? `no ${state} tasks\n` : 'no tasks\n');
      return 0;
    }
    const now = Date.now();
    const rows = result.tasks.map((task) => tableRow(task, now));
    const paint = (row: number, column: number, text: string) =>
      column === 1
        ? context.paint(stateStyle(result.tasks[row]!.state, result.tasks[row]!.exit_code ?? null), text)
        : text;
    context.write(`${renderTable(COLUMNS, rows, context.width, paint)}\n`);
    return 0;
  },
};
