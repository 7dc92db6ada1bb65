// The daemon's one reader of output files that may still grow: their size now, their bytes from an
// offset, and a watch that calls back when they change. Readiness, output, the tails and the
// screen all read through it.
//
// A task that can write the state dir (one that is root where the tasks' mounts are not locked, or
// any where they share the daemon's namespace) can put anything where an output file was: a FIFO,
// whose plain open would wait for a writer and hold the thread that serves every call, a symlink
// to a file of the host, a socket, a device, a hard link. A reader opens without waiting
// (O_NONBLOCK), follows no symlink and checks what it opened: anything but the daemon's own regular
// file is read as no file at all, and `replacedOutput` says what is there instead.
import { describeFileKind } from '../../shared/regular-file.js';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  watch,
  type FSWatcher,
  type Stats,
} from 'node:fs';

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

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY;

/** The output file at `path` open for reading, or null: none there, or something else in its place. */
export function openOutput(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, READ_FLAGS);
  } catch {
    return null;
  }
  if (isOwnOutput(fstatSync(fd))) return fd;
  closeSync(fd);
  return null;
}

/** A file the daemon made: regular, and linked nowhere else. */
function isOwnOutput(stats: Stats): boolean {
  return stats.isFile() && stats.nlink === 1;
}

/** What is at `path` in place of the output file the daemon made, in words; null when nothing or that file is there. */
export function replacedOutput(path: string): string | null {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch {
    return null;
  }
  if (isOwnOutput(stats)) return null;
  const kind = describeFileKind(stats);
  return `the output file ${path} is ${kind}, not the file the daemon made: something replaced it, and what is there is not read`;
}

/** Runs `use` with the output file at `path` open for reading; null when there is none (see openOutput). */
export function withFile<T>(path: string, use: (fd: number) => T): T | null {
  const fd = openOutput(path);
  if (fd === null) return null;
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
