// The CLI reads a task's output through the daemon's output tool (never its files): pages of what
// is new since a cursor, and the lines of each stream printed as they complete, stderr's marked.
import type { DaemonClient } from './client.js';
import type { CommandContext } from './command.js';

/** The most the daemon gives in one answer. */
export const MAX_PAGE_BYTES = 1024 * 1024;
/** Lines asked for per page: halved while a page would not fit whole. */
const PAGE_LINES = 20_000;
export const STDERR_MARK = '[stderr] ';

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
