// Finds the first line of a task's output that matches a pattern: what was written before the
// call, then what comes, read as the files grow (the output reader's watch), across chunk and
// stream boundaries: each stream is cut into lines of its own. The lines are read and matched on a
// reader thread, a chunk at a time: a pattern past its budget is refused, never run on the main thread.
import { PatternTooCostlyError } from '../../errors.js';
import { watchFiles } from '../output/growing-file.js';
import { BudgetExceededError, type ReadPool } from '../output/read-pool.js';
import type { GivenPattern } from './wait-pattern.js';

/** A matched line as it is returned. */
export const MAX_MATCHED_LINE_BYTES = 1024;

/** A stream's file, read from where the last chunk stopped, with the unfinished line it ended on. */
interface StreamFile {
  path: string;
  offset: number;
  carry: string;
}

/**
 * Resolves with the first matching line of the files at `paths`, reading on as they grow; with null
 * once `ended` has resolved and all written by then was read without a match (or once `signal`
 * aborts). Rejects with PatternTooCostlyError when a chunk takes the pattern past its budget. Each
 * chunk waits for the turn of `client` on the pattern thread.
 */
export function matchOutput(
  reads: ReadPool,
  client: string,
  paths: string[],
  pattern: GivenPattern,
  signal: AbortSignal,
  ended: Promise<unknown>,
): Promise<string | null> {
  const files: StreamFile[] = paths.map((path) => ({ path, offset: 0, carry: '' }));
  return new Promise((resolve, reject) => {
    const stop = new AbortController();
    let scanning = false;
    let again = false;
    let endSeen = false;
    const finish = (line: string | null) => {
      stop.abort();
      signal.removeEventListener('abort', onAbort);
      resolve(line === null ? null : cutLine(line));
    };
    const onAbort = () => finish(null);
    const scan = () => {
      if (scanning) return void (again = true);
      scanning = true;
      const last = endSeen; // this pass reads all the task wrote: nothing comes after it
      readToEnd(reads, client, files, pattern.regexp, signal).then(
        (line) => {
          scanning = false;
          if (line !== null || last) return finish(line);
          if (again && !signal.aborted) return void ((again = false), scan());
        },
        (error: unknown) => {
          stop.abort();
          signal.removeEventListener('abort', onAbort);
          reject(refusalOf(error, pattern));
        },
      );
    };
    signal.addEventListener('abort', onAbort, { once: true });
    watchFiles(paths, stop.signal, scan);
    void ended.then(() => ((endSeen = true), scan()));
    scan();
  });
}

/** Reads every file a chunk at a time, in turn, to its end now; the first matching line, or null. */
async function readToEnd(reads: ReadPool, client: string, files: StreamFile[], regexp: RegExp, signal: AbortSignal) {
  for (let more = true; more && !signal.aborted;) {
    more = false;
    for (const file of files) {
      const found = await reads.matchChunk(
        { path: file.path, offset: file.offset, carry: file.carry, pattern: regexp },
        client,
      );
      if (found.line !== null) return found.line;
      file.offset += found.taken;
      file.carry = found.carry;
      more ||= found.more;
    }
  }
  return null;
}

/** The refusal of a pattern past its budget; any other failure as it is. */
function refusalOf(error: unknown, pattern: GivenPattern): Error {
  if (!(error instanceof BudgetExceededError)) return error instanceof Error ? error : new Error(String(error));
  return new PatternTooCostlyError(
    pattern,
    error.describe(),
    'the wait was given up (the task goes on: status without wait_for shows it)',
  );
}

/** A line cut to MAX_MATCHED_LINE_BYTES, at a character boundary. */
function cutLine(line: string): string {
  if (Buffer.byteLength(line) <= MAX_MATCHED_LINE_BYTES) return line;
  let cut = line.slice(0, MAX_MATCHED_LINE_BYTES);
  while (Buffer.byteLength(cut) > MAX_MATCHED_LINE_BYTES) cut = cut.slice(0, -1);
  return cut;
}
