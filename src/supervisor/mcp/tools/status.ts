// status: one task's state, exit and the end of its output, or several tasks at once; can wait for
// the end, for a line of output or a listening port.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { z } from 'zod';
import { ToolInputError } from '../../../errors.js';
import { echoValue } from '../../../shared/echo.js';
import { clientOf } from '../../callers/call-clients.js';
import { awaitReadiness } from '../../readiness/readiness.js';
import { awaitTasks, MAX_STATUS_IDS } from '../../readiness/several-tasks.js';
import { compileWaitPattern } from '../../readiness/wait-pattern.js';
import { statusEndAdvice } from '../end-notice.js';
import { statusApprovalAdvice, type ToolAdvice } from '../approval-advice.js';
import { callerLeft, defineTool, field } from '../tool.js';
import {
  tailBytesField,
  TASK_ID_ACCEPTS,
  TASK_ID_PATTERN,
  taskIdField,
  verboseField,
  waitForField,
  waitForPortField,
  waitOutcomeFields,
  waitSecondsField,
} from '../shared-fields.js';
import { describeTask, describeWaited, shapeTask, taskResultSchema } from '../task-snapshot-schema.js';
import { COMMAND_CHARS_SHOWN, shortenCommand } from '../../model/task-snapshot.js';
import { OneAtATime } from '../../../one-at-a-time.js';

/**
 * The bytes of output tails a status of several tasks answers with in all: each stream's tail is
 * cut to its share when tail_bytes would pass it. Escaped in JSON, a control byte takes six: 100
 * tasks with tails of 64 KiB were 78 MB an answer, and a client that did not read held it all.
 */
export const SEVERAL_TAILS_BYTES = 128 * 1024;

/**
 * Statuses of several tasks are made one after another: made side by side, each one's snapshots
 * in the same turns, they all ended in the same turn too, and their answers were written in one go
 * (28 of 100 tasks each held the event loop for a third of a second).
 */
const several = new OneAtATime();

const severalSchema = z.object({
  tasks: z
    .array(taskResultSchema)
    .describe(`Each task named in ids, in that order; a command over ${COMMAND_CHARS_SHOWN} characters is cut there`),
  tail_bytes: z
    .number()
    .int()
    .describe(
      `The bytes of each stream's end given for each task: tail_bytes as asked, or less where the tails of all would pass ${SEVERAL_TAILS_BYTES} bytes (status of one id gives more)`,
    ),
  wait_result: z
    .enum(['ended', 'timeout'])
    .describe(
      '"ended" once the first (wait "any") or every (wait "all") task had finished; "timeout" when wait_seconds passed first',
    ),
  ended_ids: z.array(z.string()).describe('The ids of the tasks that have finished'),
});

/** What an agent reads to decide how to call it. */
const description = (advice: ToolAdvice) =>
  [
    `A task's state, exit code, runtime, ports and output tails. wait_seconds (0-30 s, default 0) blocks until it ends. ${statusEndAdvice(advice)}${statusApprovalAdvice(advice)}`,
    'wait_for or wait_for_port returns once it is ready; ids (1-100) waits for several.',
  ].join(' ');

export const statusTool = defineTool({
  name: 'status',
  title: 'Show a task, or several',
  description,
  inputSchema: z.strictObject({
    id: taskIdField().optional(),
    ids: field(
      z.array(z.string().regex(TASK_ID_PATTERN)).min(1).max(MAX_STATUS_IDS).optional(),
      `an array of 1 to ${MAX_STATUS_IDS} task ids (each ${TASK_ID_ACCEPTS})`,
      'Several task ids instead of id.',
    ),
    wait: field(z.enum(['any', 'all']).default('all'), 'one of any, all', 'With ids: wait for all or any.'),
    wait_seconds: waitSecondsField(0, 'Seconds, 0-30 (default 0).'),
    wait_for: waitForField(),
    wait_for_port: waitForPortField(),
    tail_bytes: tailBytesField(),
    peek: field(z.boolean().default(false), 'true or false', 'Observers: leave the todo.'),
    verbose: verboseField(),
  }),
  outputSchema: z.union([taskResultSchema.extend(waitOutcomeFields), severalSchema]),
  annotations: { readOnlyHint: true, openWorldHint: false },
  async handler(input, { tasks, reads, callers }, from, options) {
    const read = (id: string, tailBytes = input.tail_bytes) =>
      tasks.snapshotNow(
        input.peek ? tasks.get(id) : callerLeft(from) ? tasks.unanswered(id) : tasks.handOver(id),
        tailBytes,
      );
    if (input.ids !== undefined) {
      if (input.id !== undefined || input.wait_for !== undefined || input.wait_for_port !== undefined) {
        throw new ToolInputError(
          `Invalid status input: "ids" is taken alone: without id, wait_for or wait_for_port; got ids with ${echoValue(input.id ?? input.wait_for ?? input.wait_for_port)}`,
        );
      }
      const { result, endedIds } = await awaitTasks(tasks, input.ids, input.wait, input.wait_seconds);
      const tailBytes = Math.min(input.tail_bytes, Math.floor(SEVERAL_TAILS_BYTES / (2 * input.ids.length)));
      const snapshots = await several.run(async () => {
        const made = [];
        for (const id of input.ids!) {
          const snapshot = await read(id, tailBytes);
          made.push({ ...snapshot, command: shortenCommand(snapshot.command) });
          await nextTurn(); // a snapshot reads files: the event loop turns between two
        }
        return made;
      });
      const cut =
        tailBytes < input.tail_bytes
          ? `; each tail cut to ${tailBytes} bytes, its share of the ${SEVERAL_TAILS_BYTES} the tails of several tasks take at most`
          : '';
      const text = [
        `wait_result ${result}: ${endedIds.length} of ${snapshots.length} ended${cut}`,
        ...snapshots.map((snapshot) => describeTask(snapshot, input.verbose)),
      ].join('\n\n');
      const shaped = snapshots.map((snapshot) => shapeTask(snapshot, input.verbose));
      return { structured: { tasks: shaped, tail_bytes: tailBytes, wait_result: result, ended_ids: endedIds }, text };
    }
    if (input.id === undefined)
      throw new ToolInputError(
        'Invalid status input: "id" is required (a task id), or "ids" for several tasks at once',
      );
    const pattern = input.wait_for === undefined ? null : compileWaitPattern(input.wait_for, 'wait_for', 'status');
    if (pattern === null && input.wait_for_port === undefined) {
      await tasks.waitForEnd(input.id, input.wait_seconds, options.askable);
      return describeWaited(await read(input.id), null, input.verbose);
    }
    tasks.get(input.id); // an unknown id is refused before any wait
    const waited = await awaitReadiness(
      tasks,
      reads,
      input.id,
      { pattern, port: input.wait_for_port ?? null },
      input.wait_seconds,
      clientOf(from, callers),
    );
    return describeWaited(await read(input.id), waited, input.verbose);
  },
});
