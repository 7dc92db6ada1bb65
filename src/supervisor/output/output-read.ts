// Reads a task's output as output asks: each stream from a cursor (or the start) to what is written
// now, selected (grep, head, tail) and cut to the byte budget, and the cursor of what comes next.
// readOutput runs on a reader thread (read-pool.ts), never on the main thread.
import { encodeCursor, startOf, type OutputCursor, type StreamName, type StreamPlace } from './output-cursor.js';
import { answerCost, Selection } from './output-selection.js';
import { fileSize, readAt } from './growing-file.js';
import { countNewlines } from './newline-count.js';
import { requiredLiteral } from './required-literal.js';
import { scanStream, type LineGrep } from './stream-scan.js';

export interface OutputTask {
  runKey: string;
  pty: boolean;
  /** The width of its terminal (a pty task's), which clean text wraps at. */
  columns: number;
  paths: Record<StreamName, string>;
  truncated: Record<StreamName, boolean>;
  /** Its output is complete: it ended and everything it wrote is in the files. */
  complete: boolean;
}

/** grep as output takes it: a pattern the linear engine accepts (checked before), and lines of context. */
export interface GrepQuery {
  source: string;
  context: number;
}

export interface OutputQuery {
  streams: StreamName[];
  since: OutputCursor | null;
  grep: GrepQuery | null;
  head: number | null;
  tail: number | null;
  maxBytes: number;
  /** A terminal's bytes as written, escape sequences and all. */
  raw: boolean;
}

export interface StreamMember {
  text: string;
  first_line: number | null;
  last_line: number | null;
  omitted_lines: number;
  omitted_bytes: number;
  /** Bytes of the stream in its file. */
  bytes: number;
  truncated: boolean;
  /** With grep: the lines that matched in what was read. */
  matches?: number;
}

export interface OutputAnswer {
  members: Partial<Record<StreamName, StreamMember>>;
  next: string;
  /** The cursor given was of another run of this id (a reused name), or past the end: read from the start. */
  restarted: boolean;
}

/** Where reading starts: the cursor's places, or the start when it is of another run (or past what is there). */
export function startingPoint(
  task: OutputTask,
  since: OutputCursor | null,
): { cursor: OutputCursor; restarted: boolean } {
  if (since === null) return { cursor: startOf(task.runKey), restarted: false };
  const beyond = (['stdout', 'stderr'] as const).some((stream) => since[stream].offset > fileSize(task.paths[stream]));
  if (since.runKey !== task.runKey || beyond) return { cursor: startOf(task.runKey), restarted: true };
  return { cursor: since, restarted: false };
}

/** Whether any of `streams` has bytes past `cursor`. */
export function hasNewOutput(task: OutputTask, cursor: OutputCursor, streams: StreamName[]): boolean {
  return streams.some((stream) => fileSize(task.paths[stream]) > cursor[stream].offset);
}

/** Reads `query.streams` of `task` from `cursor`. stderr gets at most half the budget, stdout what is left. */
export async function readOutput(
  task: OutputTask,
  cursor: OutputCursor,
  query: OutputQuery,
  restarted: boolean,
): Promise<OutputAnswer> {
  const members: OutputAnswer['members'] = {};
  const next: OutputCursor = { ...cursor };
  const grep = query.grep === null ? null : lineGrepOf(query.grep);
  let budget = query.maxBytes;
  for (const stream of [...query.streams].sort((a) => (a === 'stderr' ? -1 : 1))) {
    const share = stream === 'stderr' && query.streams.includes('stdout') ? Math.floor(budget / 2) : budget;
    const { member, end } = await readStream(task, stream, cursor[stream], { ...query, grep }, share);
    members[stream] = member;
    next[stream] = end;
    budget -= answerCost(member.text);
  }
  return { members, next: encodeCursor(next), restarted };
}

/** grep's pattern as the reader runs it, and the literal it searches the bytes for first. */
function lineGrepOf({ source, context }: GrepQuery): LineGrep {
  const literal = requiredLiteral(source);
  const pattern = new RegExp(source, 'gm');
  return { pattern, line: new RegExp(source), literal: literal === null ? null : Buffer.from(literal), context };
}

async function readStream(
  task: OutputTask,
  stream: StreamName,
  from: StreamPlace,
  query: Omit<OutputQuery, 'grep'> & { grep: LineGrep | null },
  maxBytes: number,
): Promise<{ member: StreamMember; end: StreamPlace }> {
  const path = task.paths[stream];
  const to = fileSize(path);
  const selection = new Selection({ head: query.head, tail: query.tail, maxBytes: Math.max(1, maxBytes) });
  const mode = task.pty ? (query.raw ? 'raw' : 'terminal') : 'plain';
  const { end, matches, shown } = await scanStream({
    path,
    from,
    to,
    mode,
    columns: task.columns,
    grep: query.grep,
    selection,
    final: task.complete,
  });
  const member: StreamMember = {
    text: shown.text,
    first_line: shown.firstLine,
    last_line: shown.lastLine,
    omitted_lines: shown.omittedLines,
    omitted_bytes: shown.omittedBytes,
    bytes: to,
    truncated: task.truncated[stream],
    ...(query.grep === null ? {} : { matches }),
  };
  return { member, end };
}

const COUNT_CHUNK_BYTES = 4 * 1024 * 1024;

/** The cursor past everything written now: each stream's size, and its line there (counted a chunk a turn). */
export async function cursorAtEnd(task: OutputTask, cursor: OutputCursor): Promise<string> {
  const place = async (stream: StreamName): Promise<StreamPlace> => {
    let { offset, line } = cursor[stream];
    const path = task.paths[stream];
    for (let bytes = readAt(path, offset, COUNT_CHUNK_BYTES); bytes.length > 0;) {
      line += countNewlines(bytes);
      offset += bytes.length;
      await new Promise((resolve) => setImmediate(resolve));
      bytes = readAt(path, offset, COUNT_CHUNK_BYTES);
    }
    return { offset, line };
  };
  return encodeCursor({ runKey: cursor.runKey, stdout: await place('stdout'), stderr: await place('stderr') });
}
