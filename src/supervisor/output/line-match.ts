// A readiness pattern against the lines of a stream, a chunk at a time: the chunk's whole lines and
// its unfinished last one are tested (a prompt or a progress line may never end), and that last
// line is carried into the next chunk. Runs on a reader thread (read-thread.ts).
import { readAt } from './growing-file.js';
import { characterBoundary } from './stream-scan.js';

/** Bytes read at a time. */
export const MATCH_CHUNK_BYTES = 1024 * 1024;
/** A line longer than this is matched on its first part. */
const MAX_LINE_CHARS = 64 * 1024;

export interface MatchChunkJob {
  type: 'match';
  path: string;
  /** Where the last chunk stopped, in bytes. */
  offset: number;
  /** The unfinished last line of the last chunk. */
  carry: string;
  pattern: RegExp;
}

export interface MatchChunkResult {
  /** The first line that matched, or null. */
  line: string | null;
  /** Bytes taken (a character cut at the chunk's end is read again with the next). */
  taken: number;
  carry: string;
  /** The file had a whole chunk past `offset`: there may be more. */
  more: boolean;
}

/** Reads the chunk of `job.path` at `job.offset` and tests its lines against `job.pattern`. */
export function matchChunk(job: MatchChunkJob): MatchChunkResult {
  const bytes = readAt(job.path, job.offset, MATCH_CHUNK_BYTES);
  const taken = characterBoundary(bytes, bytes.length);
  const lines = (job.carry + bytes.toString('utf8', 0, taken)).split('\n');
  const carry = lines.pop()!.slice(0, MAX_LINE_CHARS);
  const more = bytes.length === MATCH_CHUNK_BYTES;
  for (const raw of lines) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (job.pattern.test(line.slice(0, MAX_LINE_CHARS))) return { line, taken, carry, more };
  }
  const line = carry.length > 0 && job.pattern.test(carry) ? carry : null;
  return { line, taken, carry, more };
}
