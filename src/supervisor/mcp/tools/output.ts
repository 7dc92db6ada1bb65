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
import { within } from '../../../within.js';
import { defineTool, field } from '../tool.js';
import { taskIdField, waitSecondsField } from '../fields.js';
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
    `Only the ${which} this many lines of the selection (after grep).${which === 'first' ? ' next then points just past the last of them, so passing it back as since pages on.' : ''}`,
  );

const inputSchema = z.strictObject({
  id: taskIdField(),
  stream: field(
    z.enum(['stdout', 'stderr', 'both']).default('both'),
    'one of stdout, stderr, both',
    'Which stream to read (default both, each in its own member). A pty task writes everything to stdout.',
  ),
  since: field(
    z.string().min(1).max(MAX_CURSOR_CHARS).optional(),
    'the "next" of an earlier output answer',
    "Read only what was written after an earlier answer: pass its next here. Without it, from the start. Each byte comes once, also across a daemon restart; a name reused by a new run is read from that run's start (restarted: true).",
  ),
  wait_seconds: waitSecondsField(
    0,
    'With nothing new to read: wait up to this many seconds (0 to 30, default 0) for new output or the task\'s end. With since, the loop {"id": "build", "since": NEXT, "wait_seconds": 30} reads a task to its end, each line once.',
  ),
  grep: field(
    z.string().min(1).max(MAX_PATTERN_CHARS).optional(),
    `a regular expression of 1 to ${MAX_PATTERN_CHARS} characters that runs in linear time (no backreferences or lookaround)`,
    'Only the lines that match this regular expression, as grep -n writes them ("4321:ERROR boom"), e.g. "error|warning" or "FAIL|panic". Matched off the daemon\'s main thread; refused (ERR_PATTERN_TOO_COSTLY) if matching takes longer than 2 s plus 2 µs a byte read, as nested quantifiers such as (a+)+ repeated do.',
  ),
  context: field(
    z.number().int().min(0).max(MAX_CONTEXT_LINES).optional(),
    `an integer from 0 to ${MAX_CONTEXT_LINES}, given only with grep`,
    'With grep: this many lines before and after each match, as grep -n -C writes them ("4320-..."), "--" between groups.',
  ),
  head: lineCountField('first'),
  tail: lineCountField('last'),
  max_bytes: field(
    z.number().int().min(1).max(MAX_MAX_BYTES).default(DEFAULT_MAX_BYTES),
    `an integer from 1 to ${MAX_MAX_BYTES}`,
    `The most bytes of text to return (default ${DEFAULT_MAX_BYTES}; with both streams stderr gets at most half). A larger selection comes back as its beginning and its end, with how many lines and bytes were left out between them.`,
  ),
  raw: field(
    z.boolean().default(false),
    'true or false',
    'For a pty task: the bytes as the terminal got them (escape sequences, \\r), instead of clean text.',
  ),
  screen: field(
    z.boolean().default(false),
    'true or false',
    "For a pty task: what its terminal shows now, as a person would see it (rows of text, the cursor, whether a full-screen program is up), instead of its text. Use it to drive top, vim, a REPL or an installer's menu with input.",
  ),
});

export const outputTool = defineTool({
  name: 'output',
  title: "Read a task's output",
  description: [
    "Read a task's output without paying for what you have already seen. Every answer has next: pass it back as since to get only what is new; with wait_seconds the call waits for it. grep picks matching lines with their numbers (grep -n style, context for lines around them); head and tail the first or last lines; max_bytes (default 16 KiB) keeps the beginning and the end of a larger answer and says what was left out.",
    'A pty task comes back as clean text (escape sequences removed, progress bars as they ended); screen: true shows its terminal as a person sees it.',
    'E.g. the first error of a build: {"id": "build", "grep": "error", "context": 3, "head": 1}.',
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
    await within(Promise.race([awaitGrowth(paths, sizes, stop.signal), ended]), seconds * 1000, undefined);
  } finally {
    stop.abort();
  }
}
