// Finds the first line of a task's output that matches a pattern: what was written before the
// call, then what comes, read as the files grow (the output reader's watch), across chunk and
// stream boundaries: each stream is cut into lines of its own.
import { StringDecoder } from 'node:string_decoder';
import { readAt, watchFiles } from '../output/growing-file.js';

/** Bytes read at a time, with a turn of the event loop between reads: a big file never blocks the daemon. */
const READ_CHUNK_BYTES = 1024 * 1024;
/** A line longer than this is matched on its first part. */
const MAX_LINE_CHARS = 64 * 1024;
/** A matched line as it is returned. */
export const MAX_MATCHED_LINE_BYTES = 1024;

/** Splits text into lines as it comes, and tests each (and the unfinished last one) against a pattern. */
export class LineMatcher {
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly pattern: RegExp) {}

  /** Feeds bytes; returns the first line that matches, or null. */
  feed(bytes: Buffer): string | null {
    const lines = (this.partial + this.decoder.write(bytes)).split('\n');
    this.partial = lines.pop()!.slice(0, MAX_LINE_CHARS);
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (this.pattern.test(line.slice(0, MAX_LINE_CHARS))) return line;
    }
    // A prompt or a progress line may not end: it counts as written.
    return this.partial.length > 0 && this.pattern.test(this.partial) ? this.partial : null;
  }
}

/** A stream's file, read from where the last read stopped. */
class GrowingFile {
  private offset = 0;

  constructor(
    readonly path: string,
    private readonly matcher: LineMatcher,
  ) {}

  /** Reads one chunk past what was read; `more` when the file has more after it. */
  readChunk(): { line: string | null; more: boolean } {
    const bytes = readAt(this.path, this.offset, READ_CHUNK_BYTES);
    this.offset += bytes.length;
    return { line: bytes.length > 0 ? this.matcher.feed(bytes) : null, more: bytes.length === READ_CHUNK_BYTES };
  }
}

/**
 * Resolves with the first matching line of the files at `paths`; with `follow`, reading on as they
 * grow until one matches or `signal` aborts (then null), else only to their current end (then null).
 */
export function matchOutput(
  paths: string[],
  pattern: RegExp,
  signal: AbortSignal,
  follow = true,
): Promise<string | null> {
  const files = paths.map((path) => new GrowingFile(path, new LineMatcher(pattern)));
  return new Promise((resolve) => {
    const stop = new AbortController();
    let scanning = false;
    let again = false;
    const finish = (line: string | null) => {
      stop.abort();
      signal.removeEventListener('abort', onAbort);
      resolve(line === null ? null : cutLine(line));
    };
    const onAbort = () => finish(null);
    const scan = () => {
      if (scanning) return void (again = true);
      scanning = true;
      const step = () => {
        if (signal.aborted) return;
        let more = false;
        for (const file of files) {
          const { line, more: fileMore } = file.readChunk();
          if (line !== null) return finish(line);
          more ||= fileMore;
        }
        if (more || again) {
          again = false;
          return void setImmediate(step);
        }
        scanning = false;
        if (!follow) finish(null);
      };
      step();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (follow) watchFiles(paths, stop.signal, scan);
    scan();
  });
}

/** A line cut to MAX_MATCHED_LINE_BYTES, at a character boundary. */
function cutLine(line: string): string {
  if (Buffer.byteLength(line) <= MAX_MATCHED_LINE_BYTES) return line;
  let cut = line.slice(0, MAX_MATCHED_LINE_BYTES);
  while (Buffer.byteLength(cut) > MAX_MATCHED_LINE_BYTES) cut = cut.slice(0, -1);
  return cut;
}
