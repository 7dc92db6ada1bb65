// The daemon's one reader of output files that may still grow: their size now, their bytes from an
// offset, and a watch that calls back when they change. Readiness, output, the tails and the
// screen all read through it.
import { closeSync, fstatSync, openSync, readSync, watch, type FSWatcher } from 'node:fs';

/** Behind the file watch (which misses a file created after it started): how often the files are looked at anyway. */
const POLL_MS = 250;

/** The size of the file at `path`; 0 when it does not exist (yet). */
export function fileSize(path: string): number {
  return withFile(path, (fd) => fstatSync(fd).size) ?? 0;
}

/** Up to `length` bytes of the file at `path` from `offset` (fewer at its end; none when it does not exist). */
export function readAt(path: string, offset: number, length: number): Buffer {
  return withFile(path, (fd) => readOpen(fd, offset, length)) ?? Buffer.alloc(0);
}

/** Up to `length` bytes of an open file from `offset`. */
export function readOpen(fd: number, offset: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(Math.max(0, length));
  return buffer.subarray(0, readInto(fd, buffer, 0, buffer.length, offset));
}

/** Reads up to `length` bytes of an open file from `offset` into `buffer` at `at`; returns how many (fewer at its end). */
export function readInto(fd: number, buffer: Buffer, at: number, length: number, offset: number): number {
  let read = 0;
  while (read < length) {
    const count = readSync(fd, buffer, at + read, length - read, offset + read);
    if (count === 0) break;
    read += count;
  }
  return read;
}

/** Runs `use` with the file at `path` open for reading; null when it cannot be opened. */
export function withFile<T>(path: string, use: (fd: number) => T): T | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    return use(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Calls `changed` whenever one of the files at `paths` may have changed (inotify where the file
 * exists, a slow poll behind it), until `signal` aborts.
 */
export function watchFiles(paths: string[], signal: AbortSignal, changed: () => void): void {
  if (signal.aborted) return;
  const watchers: FSWatcher[] = [];
  for (const path of paths) {
    try {
      watchers.push(watch(path, { persistent: false }, changed));
    } catch {
      // not created yet: the poll finds it
    }
  }
  const timer = setInterval(changed, POLL_MS).unref();
  signal.addEventListener(
    'abort',
    () => {
      for (const watcher of watchers) watcher.close();
      clearInterval(timer);
    },
    { once: true },
  );
}

/** Resolves once a file at `paths` has grown past its size in `sizes`, or `signal` aborts; true if it grew. */
export function awaitGrowth(paths: string[], sizes: number[], signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const stop = new AbortController();
    const finish = (grew: boolean) => {
      stop.abort();
      signal.removeEventListener('abort', onAbort);
      resolve(grew);
    };
    const onAbort = () => finish(false);
    const check = () => {
      if (paths.some((path, index) => fileSize(path) > sizes[index]!)) finish(true);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) return finish(false);
    watchFiles(paths, stop.signal, check);
    check();
  });
}
