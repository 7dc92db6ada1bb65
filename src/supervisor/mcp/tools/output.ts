// output: a task's output as an agent needs it: what is new since the last look (waiting for it),
// the lines that match, the first and last lines within a budget, clean text of a terminal, and
// the screen of a pty task.
import { z } from 'zod';
import { PatternTooCostlyError, ToolInputError } from '../../../errors.js';
import { echoValue } from '../../../shared/echo.js';
import { isFinished } from '../../../shared/task-states.js';
import { decodeCursor, type StreamName } from '../../output/output-cursor.js';
import { cursorAtEnd, hasNewOutput, startingPoint, type OutputTask } from '../../output/output-read.js';
import { BudgetExceededError } from '../../output/read-pool.js';
import { clientOf } from '../../callers/call-clients.js';
import { awaitGrowth, fileSize } from '../../output/growing-file.js';
import { TerminalScreens } from '../../output/terminal-screen.js';
import { DEFAULT_COLUMNS, DEFAULT_ROWS, MAX_TERMINAL_SIZE } from '../../../process/terminals.js';
import { compileWaitPattern, MAX_PATTERN_CHARS } from '../../readiness/wait-pattern.js';
import type { TaskService } from '../../tasks/task-service.js';
import type { TaskRecord } from '../../model/task.js';
import { withTimeout } from '../../../with-timeout.js';
import { defineTool, field } from '../tool.js';
import { taskIdField, waitSecondsField } from '../shared-fields.js';
import { describeOutput, outputSchema, viewOf } from '../output-view.js';

export const DEFAULT_MAX_BYTES = 16 * 1024;
export const MAX_MAX_BYTES = 1024 * 1024;
const MAX_CONTEXT_LINES = 20;
const MAX_HEAD_TAIL_LINES = 100_000;
const MAX_CURSOR_CHARS = 256;

const screens = new TerminalScreens();

const lineCountField = (which: string) =>
  field(
    z.number().int().min(1).max(MAX_HEAD_TAIL_LINES).optional(),
    `an integer from 1 to ${MAX_HEAD_TAIL_LINES}`,
    `Only the ${which} N lines.`,
  );

const inputSchema = z.strictObject({
  id: taskIdField(),
  stream: field(
    z.enum(['stdout', 'stderr', 'both']).default('both'),
    'one of stdout, stderr, both',
    'Which stream (default both).',
  ),
  since: field(
    z.string().min(1).max(MAX_CURSOR_CHARS).optional(),
    'the "next" of an earlier output answer',
    "An earlier answer's next: only what came after it.",
  ),
  wait_seconds: waitSecondsField(0, 'Seconds to wait for new output, 0-30 (default 0).'),
  grep: field(
    z.string().min(1).max(MAX_PATTERN_CHARS).optional(),
    `a regular expression of 1 to ${MAX_PATTERN_CHARS} characters that runs in linear time (no backreferences or lookaround)`,
    'RE2 regular expression: only matching lines (grep -n).',
  ),
  context: field(
    z.number().int().min(0).max(MAX_CONTEXT_LINES).optional(),
    `an integer from 0 to ${MAX_CONTEXT_LINES}, given only with grep`,
    'With grep: lines around each match.',
  ),
  head: lineCountField('first'),
  tail: lineCountField('last'),
  max_bytes: field(
    z.number().int().min(1).max(MAX_MAX_BYTES).default(DEFAULT_MAX_BYTES),
    `an integer from 1 to ${MAX_MAX_BYTES}`,
    `Most bytes to return (default ${DEFAULT_MAX_BYTES}).`,
  ),
  raw: field(z.boolean().default(false), 'true or false', 'pty: the raw bytes.'),
  screen: field(z.boolean().default(false), 'true or false', 'pty: the screen now.'),
});

export const outputTool = defineTool({
  name: 'output',
  title: "Read a task's output",
  description: [
    'Read a task\'s output. Each answer has next: pass it as since for only what is new (wait_seconds, 0-30 s, waits for it). grep, head, tail pick lines, e.g. {"id": "build", "grep": "error", "context": 3, "head": 1}.',
  ].join(' '),
  inputSchema,
  outputSchema,
  annotations: { readOnlyHint: true, openWorldHint: false },
  async handler(input, { tasks, reads, callers }, from) {
    checkCombinations(input);
    const pattern = input.grep === undefined ? null : compileWaitPattern(input.grep, 'grep', 'output');
    const since = input.since === undefined ? null : decodeCursor(input.since);
    let record = tasks.get(input.id);
    if (input.screen && !record.pty) {
      throw new ToolInputError(
        `Invalid output input: "screen" is for a task run with pty: true; task ${record.id} runs on pipes, so read its text instead; got ${echoValue(input.screen)}`,
      );
    }
    const streams: StreamName[] = input.stream === 'both' ? ['stdout', 'stderr'] : [input.stream];
    let task = outputTaskOf(tasks, record);
    let { cursor, restarted } = startingPoint(task, since);
    if (input.wait_seconds > 0 && !task.complete && !hasNewOutput(task, cursor, streams)) {
      await awaitNewOutput(tasks, record, task, streams, cursor, input.wait_seconds);
      record = tasks.get(input.id);
      task = outputTaskOf(tasks, record);
      ({ cursor, restarted } = startingPoint(task, since));
    }
    const base = { id: record.id, state: record.state, pty: record.pty, complete: task.complete, restarted };
    if (input.screen) {
      const size = record.terminalSize ?? { cols: DEFAULT_COLUMNS, rows: DEFAULT_ROWS };
      const screen = await screens.screenOf(record.id, record.runKey, task.paths.stdout, size.cols, size.rows);
      const view = viewOf({ ...base, next: await cursorAtEnd(task, cursor) }, {}, screen);
      return { structured: view, text: describeOutput(view) };
    }
    const query = {
      streams,
      since: cursor,
      grep: pattern === null ? null : { source: pattern.source, context: input.context ?? 0 },
      head: input.head ?? null,
      tail: input.tail ?? null,
      maxBytes: input.max_bytes,
      raw: input.raw,
    };
    // A read without grep takes no turn on the pattern thread: its caller is not looked up.
    const client = pattern === null ? null : clientOf(from, callers);
    const answer = await reads.readOutput(task, cursor, query, restarted, client).catch((error: unknown) => {
      if (pattern === null || !(error instanceof BudgetExceededError)) throw error;
      throw new PatternTooCostlyError(
        pattern,
        error.describe(),
        'nothing was read: call output without grep, or grep a simpler pattern',
      );
    });
    const view = viewOf({ ...base, next: answer.next }, answer.members, null);
    return { structured: view, text: describeOutput(view) };
  },
});

function checkCombinations(input: z.output<typeof inputSchema>): void {
  if (input.context !== undefined && input.grep === undefined) {
    throw new ToolInputError(
      `Invalid output input: "context" is taken only with grep (the lines around each match); got ${echoValue(input.context)} without grep`,
    );
  }
  if (input.screen) {
    const reading = (['grep', 'head', 'tail'] as const).find((name) => input[name] !== undefined);
    if (reading !== undefined)
      throw new ToolInputError(
        `Invalid output input: "screen" returns the terminal instead of the text, and is taken without grep, head or tail; got screen with ${reading} ${echoValue(input[reading])}`,
      );
  }
}

/** The task as its output's reader needs it. */
function outputTaskOf(tasks: TaskService, record: TaskRecord): OutputTask {
  const paths = tasks.outputPaths(record.id);
  return {
    runKey: record.runKey,
    pty: record.pty,
    columns: record.terminalSize?.cols ?? MAX_TERMINAL_SIZE,
    paths,
    truncated: { stdout: record.stdoutTruncated, stderr: record.stderrTruncated },
    complete: isFinished(record.state) && !tasks.isLive(record),
  };
}

/** Waits up to `seconds` for bytes past `cursor` in `streams`, or the task's end. */
async function awaitNewOutput(
  tasks: TaskService,
  record: TaskRecord,
  task: OutputTask,
  streams: StreamName[],
  cursor: { stdout: { offset: number }; stderr: { offset: number } },
  seconds: number,
): Promise<void> {
  const stop = new AbortController();
  const paths = streams.map((stream) => task.paths[stream]);
  // A cursor of another run reads from the start: any byte is new.
  const sizes = streams.map((stream) =>
    cursor[stream].offset > fileSize(task.paths[stream]) ? 0 : cursor[stream].offset,
  );
  const ended = tasks.whenEnded(record.id);
  try {
    await withTimeout(Promise.race([awaitGrowth(paths, sizes, stop.signal), ended]), seconds * 1000, undefined);
  } finally {
    stop.abort();
  }
}
