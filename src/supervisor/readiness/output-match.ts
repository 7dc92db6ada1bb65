// Finds the first line of a task's output that matches a pattern: what was written before the
// call, then what comes, read as the files grow (inotify, with a slow poll behind it), across
// chunk and stream boundaries: each stream is cut into lines of its own.
import { closeSync, openSync, readSync, watch, type FSWatcher } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

/** Bytes read at a time, with a turn of the event loop between reads: a big file never blocks the daemon. */
const READ_CHUNK_BYTES = 1024 * 1024;
/** A line longer than this is matched on its first part. */
const MAX_LINE_CHARS = 64 * 1024;
/** A matched line as it is returned. */
export const MAX_MATCHED_LINE_BYTES = 1024;
/** Behind the file watch (which can miss a file created after it started): how often the files are looked at anyway. */
const POLL_MS = 250;

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

  constructor(readonly path: string, private readonly matcher: LineMatcher) {}

  /** Reads one chunk past what was read; `more` when the file has more after it. */
  readChunk(): { line: string | null; more: boolean } {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return { line: null, more: false }; // not created yet
    }
    try {
      const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
      const read = readSync(fd, buffer, 0, READ_CHUNK_BYTES, this.offset);
      this.offset += read;
      return { line: read > 0 ? this.matcher.feed(buffer.subarray(0, read)) : null, more: read === READ_CHUNK_BYTES };
    } finally {
      closeSync(fd);
    }
  }
}

/**
 * Resolves with the first matching line of the files at `paths`; with `follow`, reading on as they
 * grow until one matches or `signal` aborts (then null), else only to their current end (then null).
 */
export function matchOutput(paths: string[], pattern: RegExp, signal: AbortSignal, follow = true): Promise<string | null> {
  const files = paths.map((path) => new GrowingFile(path, new LineMatcher(pattern)));
  return new Promise((resolve) => {
    const watchers: FSWatcher[] = [];
    let timer: NodeJS.Timeout | null = null;
    let scanning = false;
    let again = false;
    const finish = (line: string | null) => {
      for (const watcher of watchers) watcher.close();
      if (timer) clearInterval(timer);
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
    for (const file of follow ? files : []) {
      try {
        watchers.push(watch(file.path, { persistent: false }, scan));
      } catch {
        // not created yet: the poll finds it
      }
    }
    if (follow) timer = setInterval(scan, POLL_MS).unref();
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
