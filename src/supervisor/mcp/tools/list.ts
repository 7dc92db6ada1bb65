// list: the newest tasks, optionally of one state.
import { z } from 'zod';
import { TASK_STATES } from '../../model/task.js';
import { defineTool, field } from '../tool.js';

const MAX_LIST_LIMIT = 1000;
const COMMAND_PREVIEW_CHARS = 200;

export const listTool = defineTool({
  name: 'list',
  title: 'List tasks',
  description: 'List tasks, newest first, with their state, command, start time, runtime and exit code. Filter by state, e.g. "running" to see what is still going.',
  inputSchema: z.strictObject({
    state: field(z.enum(TASK_STATES).optional(), `one of ${TASK_STATES.join(', ')}`, 'Only tasks in this state.'),
    limit: field(z.number().int().min(1).max(MAX_LIST_LIMIT).default(50), `an integer from 1 to ${MAX_LIST_LIMIT}`, 'At most this many tasks (default 50).'),
  }),
  outputSchema: z.object({
    tasks: z.array(
      z.object({
        id: z.string(),
        name: z.string().nullable(),
        state: z.enum(TASK_STATES),
        command: z.string().describe('The first 200 characters of the command'),
        started_at: z.string().nullable(),
        runtime_ms: z.number().int().nullable(),
        exit_code: z.number().int().nullable(),
      }),
    ).describe('Newest first'),
  }),
  annotations: { readOnlyHint: true },
  async handler(input, { tasks }) {
    const now = Date.now();
    const rows = tasks.list(input.state ?? null, input.limit).map((record) => ({
      id: record.id,
      name: record.name,
      state: record.state,
      command: record.command.slice(0, COMMAND_PREVIEW_CHARS),
      started_at: record.startedAt === null ? null : new Date(record.startedAt).toISOString(),
      runtime_ms: record.startedAt === null ? null : (record.endedAt ?? now) - record.startedAt,
      exit_code: record.exitCode,
    }));
    const text = rows.length === 0
      ? 'no tasks'
      : rows.map((row) => `${row.id}\t${row.state}\t${row.exit_code ?? ''}\t${row.command.split('\n')[0]}`).join('\n');
    return { structured: { tasks: rows }, text };
  },
});
