// The first lines of a stream longer than the tail status shows, and how much lies between them
// and the tail: so the first error of a long build is not lost behind the tail.
import { BoundedCache } from '../bounded-cache.js';
import { readAt } from './growing-file.js';
import { countNewlines } from './newline-count.js';
import { decodeWholeCharacters } from './output-tail.js';

export const HEAD_LINES = 5;
const HEAD_BYTES = 1024;
const COUNT_CHUNK_BYTES = 4 * 1024 * 1024;

export interface StreamHead {
  /** The first whole lines (at most HEAD_LINES, within HEAD_BYTES), each with its newline. */
  text: string;
  /** What lies between them and the tail. */
  betweenLines: number;
  betweenBytes: number;
}

/** Newlines counted so far in each run's stream, so that a growing stream is counted once. */
const counted = new BoundedCache<string, { offset: number; lines: number }>(256);

/** The head of the stream at `path` whose tail starts at byte `tailStart`; null when the tail reaches its start. `run` names the run (a reused name starts over). */
export function readStreamHead(run: string, path: string, tailStart: number): StreamHead | null {
  const start = readAt(path, 0, Math.min(HEAD_BYTES, tailStart));
  let headEnd = 0;
  for (let lines = 0; lines < HEAD_LINES; lines++) {
    const newline = start.indexOf(0x0a, headEnd);
    if (newline === -1) break;
    headEnd = newline + 1;
  }
  if (headEnd === 0 || headEnd >= tailStart) return null;
  const key = `${run} ${path}`;
  const known = counted.get(key);
  let place = known !== undefined && known.offset <= tailStart ? known : { offset: 0, lines: 0 };
  while (place.offset < tailStart) {
    const bytes = readAt(path, place.offset, Math.min(COUNT_CHUNK_BYTES, tailStart - place.offset));
    if (bytes.length === 0) break;
    place = { offset: place.offset + bytes.length, lines: place.lines + countNewlines(bytes) };
  }
  counted.set(key, place);
  const headLines = countNewlines(start.subarray(0, headEnd));
  return {
    text: decodeWholeCharacters(start.subarray(0, headEnd)),
    betweenLines: place.lines - headLines,
    betweenBytes: tailStart - headEnd,
  };
}
