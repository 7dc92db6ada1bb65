// The cursor of output's since and next: where each stream of one run of a task was read up to
// (a byte offset, and the number of the line that goes on there), as one opaque string.
import { ToolInputError } from '../../errors.js';
import { echoValue } from '../../shared/echo.js';

export type StreamName = 'stdout' | 'stderr';
export const STREAM_NAMES: readonly StreamName[] = ['stdout', 'stderr'];

/** A place in one stream: the bytes before it were read; `line` is the number of the line at it. */
export interface StreamPlace {
  offset: number;
  line: number;
}

export interface OutputCursor {
  /** The run it belongs to: a name reused by a new run starts over. */
  runKey: string;
  stdout: StreamPlace;
  stderr: StreamPlace;
}

const VERSION = 'o1';
const START: StreamPlace = { offset: 0, line: 1 };

/** The start of both streams of run `runKey`. */
export function startOf(runKey: string): OutputCursor {
  return { runKey, stdout: START, stderr: START };
}

/** The cursor as `next` gives it. */
export function encodeCursor(cursor: OutputCursor): string {
  const fields = [
    VERSION,
    cursor.runKey,
    cursor.stdout.offset,
    cursor.stdout.line,
    cursor.stderr.offset,
    cursor.stderr.line,
  ];
  return Buffer.from(fields.join(' ')).toString('base64url');
}

/** A `since` string back as a cursor; anything not made by encodeCursor is refused, naming the field. */
export function decodeCursor(text: string): OutputCursor {
  const fields = Buffer.from(text, 'base64url').toString('utf8').split(' ');
  const numbers = fields.slice(2).map((field) => (/^\d{1,15}$/.test(field) ? Number(field) : Number.NaN));
  if (
    fields.length !== 6 ||
    fields[0] !== VERSION ||
    !/^[0-9a-f-]{8,64}$/.test(fields[1]!) ||
    numbers.some((value) => Number.isNaN(value) || value < 0) ||
    numbers[1]! < 1 ||
    numbers[3]! < 1
  ) {
    throw new ToolInputError(
      `Invalid output input: "since" must be the "next" of an earlier output answer, passed back as it was; got ${echoValue(text)}`,
    );
  }
  return {
    runKey: fields[1]!,
    stdout: { offset: numbers[0]!, line: numbers[1]! },
    stderr: { offset: numbers[2]!, line: numbers[3]! },
  };
}
