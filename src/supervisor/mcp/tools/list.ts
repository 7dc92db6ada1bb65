// list: the newest tasks, optionally of one state.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { OneAtATime } from '../../../one-at-a-time.js';
import { TASK_STATES } from '../../../shared/task-states.js';
import { MAX_LIST_LIMIT } from '../../../shared/tool-bounds.js';
import { defineTool, field } from '../tool.js';
import { taskSnapshotSchema } from '../task-snapshot-schema.js';

const COMMAND_PREVIEW_CHARS = 200;

/**
 * Lists are made one after another, the event loop turning every ROWS_A_TURN rows: eight clients
 * listing 1,000 tasks over and over, each list made in one go, held /healthz 0.74 s at the median
 * and 1.7 s at worst.
 */
const listings = new OneAtATime();
const ROWS_A_TURN = 50;

export const listTool = defineTool({
  name: 'list',
  title: 'List tasks',
  description: 'Tasks, newest first, with state, command, runtime, exit code and costs.',
  inputSchema: z.strictObject({
    state: field(z.enum(TASK_STATES).optional(), `one of ${TASK_STATES.join(', ')}`, 'Only tasks in this state.'),
    limit: field(
      z.number().int().min(1).max(MAX_LIST_LIMIT).default(50),
      `an integer from 1 to ${MAX_LIST_LIMIT}`,
      'At most this many, 1-1000 (default 50).',
    ),
    ports: field(z.boolean().default(false), 'true or false', 'Also the ports each listens on.'),
  }),
  outputSchema: z.object({
    tasks: z
      .array(
        taskSnapshotSchema
          .pick({
            id: true,
            name: true,
            state: true,
            pty: true,
            started_at: true,
            ended_at: true,
            runtime_ms: true,
            exit_code: true,
            signal: true,
            cpu_ms: true,
            memory_bytes: true,
            processes: true,
            sandbox: true,
          })
          .extend({
            ports: taskSnapshotSchema.shape.ports
              .optional()
              .describe('With ports: true, the ports it listens on now (the first 100 by port)'),
            ports_unlisted: taskSnapshotSchema.shape.ports_unlisted
              .optional()
              .describe('With ports: true, how many more it listens on than ports lists'),
          })
          .extend({
            command: z.string().describe('The first 200 characters of the command'),
            created_at: z.string().describe('ISO 8601 time run was called'),
          }),
      )
      .describe('Newest first'),
  }),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async handler(input, { tasks }) {
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const rows = await listings.run(async () => {
      const now = Date.now();
      const made = [];
      for (const record of tasks.list(input.state ?? null, input.limit, COMMAND_PREVIEW_CHARS)) {
        if (made.length % ROWS_A_TURN === ROWS_A_TURN - 1) await nextTurn();
        // Its processes read now (findPorts reads them too); a task in a cgroup is read by resourcesOf.
        const ports = input.ports ? await tasks.findPorts(record) : null;
        if (!input.ports) await tasks.readNow(record);
        const resources = tasks.resourcesOf(record);
        made.push({
          id: record.id,
          name: record.name,
          state: record.state,
          pty: record.pty,
          command: record.command.slice(0, COMMAND_PREVIEW_CHARS),
          created_at: new Date(record.createdAt).toISOString(),
          started_at: iso(record.startedAt),
          ended_at: iso(record.endedAt),
          runtime_ms: record.startedAt === null ? null : Math.max(0, (record.endedAt ?? now) - record.startedAt),
          exit_code: record.exitCode,
          signal: record.signal,
          cpu_ms: resources.cpuMs,
          memory_bytes: resources.memoryBytes,
          processes: resources.processes,
          sandbox: record.sandbox,
          ...(ports === null ? {} : { ports: ports.listed, ports_unlisted: ports.unlisted }),
        });
      }
      return made;
    });
    const text =
      rows.length === 0
        ? 'no tasks'
        : rows
            .map((row) => `${row.id}\t${row.state}\t${row.exit_code ?? ''}\t${row.command.split('\n')[0]}`)
            .join('\n');
    return { structured: { tasks: rows }, text };
  },
});
