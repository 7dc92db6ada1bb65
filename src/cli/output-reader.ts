// A task's output as the daemon's output tool gives it: text, in pages of what is new since a
// cursor, the lines of each stream printed as they complete, stderr's marked; and the loop that
// follows a task to its end (exact-output.ts copies one stream's bytes from its file instead).
import { setTimeout as sleep } from 'node:timers/promises';
import { isFinished, type TaskState } from '../shared/task-states.js';
import type { DaemonClient } from './client.js';
import type { CommandContext } from './command.js';

/** The most the daemon gives in one answer. */
export const MAX_PAGE_BYTES = 1024 * 1024;
/** Lines asked for per page: halved while a page would not fit whole. */
const PAGE_LINES = 20_000;
export const STDERR_MARK = '[stderr] ';
/** After the task's end: how long to wait for the last of its output (a terminal's is read to its end after it). */
const SETTLE_MS = 200;

export type StreamChoice = 'stdout' | 'stderr' | 'both';

export interface OutputMember {
  text: string;
  first_line: number | null;
  last_line: number | null;
  omitted_lines: number;
  omitted_bytes: number;
}

export interface OutputAnswer {
  id: string;
  state: string;
  next: string;
  stdout?: OutputMember;
  stderr?: OutputMember;
  screen?: { text: string };
  [field: string]: unknown;
}

/** One call of the output tool. */
export function fetchOutput(client: DaemonClient, id: string, args: Record<string, unknown>): Promise<OutputAnswer> {
  return client.callTool<OutputAnswer>('output', { id, ...args });
}

/**
 * The next page after `since` with nothing left out: as many lines as fit in one answer (fewer
 * while a page would not fit, down to a single line, which the daemon cuts if it alone is too long).
 */
export async function fetchWholePage(
  client: DaemonClient,
  id: string,
  args: Record<string, unknown>,
): Promise<OutputAnswer> {
  for (let lines = PAGE_LINES; ; lines = Math.max(1, Math.floor(lines / 2))) {
    const answer = await fetchOutput(client, id, { ...args, head: lines, max_bytes: MAX_PAGE_BYTES });
    const cut = [answer.stdout, answer.stderr].some((member) => member !== undefined && member.omitted_bytes > 0);
    if (!cut || lines === 1) return answer;
  }
}

/** Prints answers' text: one stream as it came, or both as whole lines with stderr's marked (an unfinished line waits for its end). */
export class OutputPrinter {
  private readonly pending = { stdout: '', stderr: '' };

  constructor(
    private readonly context: CommandContext,
    private readonly stream: StreamChoice,
  ) {}

  /** Prints what `answer` brought. */
  print(answer: OutputAnswer): void {
    if (this.stream !== 'both') {
      const text = answer[this.stream]?.text ?? '';
      if (text.length > 0) this.context.write(text);
      return;
    }
    for (const name of ['stdout', 'stderr'] as const) {
      const lines = (this.pending[name] + (answer[name]?.text ?? '')).split('\n');
      this.pending[name] = lines.pop()!;
      for (const line of lines) this.writeLine(name, line);
    }
  }

  /** Prints the unfinished last lines, at the end. */
  flush(): void {
    for (const name of ['stdout', 'stderr'] as const) {
      if (this.pending[name].length > 0) this.writeLine(name, this.pending[name]);
      this.pending[name] = '';
    }
  }

  private writeLine(name: 'stdout' | 'stderr', line: string): void {
    this.context.write(`${name === 'stderr' ? this.context.paint('red', `${STDERR_MARK}${line}`) : line}\n`);
  }
}

/** Whether an answer brought nothing new. */
export function isEmpty(answer: OutputAnswer): boolean {
  return [answer.stdout, answer.stderr].every((member) => member === undefined || member.text.length === 0);
}

/**
 * Reads with `read` from the cursor on (it waits for more) and shows each answer with `show`
 * (true when it showed anything new), until the task has ended and its output is all shown, or
 * stdout has closed.
 */
export async function followToEnd(
  context: CommandContext,
  cursor: string | undefined,
  read: (since: string | undefined) => Promise<OutputAnswer>,
  show: (answer: OutputAnswer) => Promise<boolean>,
): Promise<void> {
  let settled = false;
  while (!context.stdoutClosed()) {
    const answer = await read(cursor);
    const shown = await show(answer);
    cursor = answer.next;
    if (!isFinished(answer.state as TaskState) || shown) continue;
    // Ended, and nothing new: done once all of it is in (a lingering process may hold it open: then once more).
    if (answer.complete === true || settled) return;
    settled = true;
    await sleep(SETTLE_MS);
  }
}

/** The output tool's tail for -n, when there is no cursor to read from. */
export function tailArgs(history: number, since: string | undefined): { tail?: number } {
  return Number.isFinite(history) && since === undefined ? { tail: Math.max(1, history) } : {};
}

export interface TextReading {
  stream: StreamChoice;
  args: Record<string, unknown>;
  history: number;
  since: string | undefined;
  maxBytes: number | undefined;
  follow: boolean;
}

/** The daemon's text of the output: the history (or what came after --since), then, with follow, what comes. */
export async function showText(context: CommandContext, id: string, reading: TextReading): Promise<void> {
  const { args, history, maxBytes } = reading;
  const printer = new OutputPrinter(context, reading.stream);
  let next = reading.since;
  const tail = tailArgs(history, next);
  const show = async (answer: OutputAnswer) => {
    if (history !== 0 || next !== undefined) printer.print(answer);
    next = answer.next;
    await context.drain();
    return !isEmpty(answer);
  };
  const since = () => (next === undefined ? {} : { since: next });
  if (maxBytes !== undefined || 'tail' in tail) {
    await show(
      await fetchOutput(context.client, id, { ...args, ...tail, max_bytes: maxBytes ?? MAX_PAGE_BYTES, ...since() }),
    );
  } else {
    while (!context.stdoutClosed() && (await show(await fetchWholePage(context.client, id, { ...args, ...since() }))));
  }
  if (reading.follow) {
    await followToEnd(
      context,
      next,
      (cursor) => fetchWholePage(context.client, id, { ...args, since: cursor, wait_seconds: 30 }),
      show,
    );
  }
  printer.flush();
}
