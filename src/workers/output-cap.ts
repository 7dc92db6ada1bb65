// The output cap: writes one stream of a task into its file as it arrives, up to the cap; the rest
// is discarded. A pipe task's shim does the same in C (native/src/shim-output.c, the same limits),
// and its cuts are told here in the same words.
import { closeSync, constants, fstatSync, open, statfsSync, writeSync } from 'node:fs';
import { unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import type { LaunchedTask, OutputCut, OutputFiles } from '../process/launched-task.js';
import type { StreamName, TaskSpec } from './protocol.js';

/**
 * Output never takes the last of the state dir's disk, which the registry needs: writing stops
 * while less than this is free (64 MiB, or a tenth of a smaller file system). Looked at once per
 * RESERVE_CHECK_BYTES written, so it costs a statfs per MiB; on a disk with less than twice that
 * free beyond the reserve, once half of what is is written (a 3 MB disk's reserve is 0.3 MB).
 */
const RESERVE_MAX_BYTES = 64 * 1024 * 1024;
const RESERVE_CHECK_BYTES = 1024 * 1024;

/** The bytes the file system of `dir` has free beyond its reserve (negative: less than it is free); Infinity when that cannot be read. */
function beyondReserve(dir: string): number {
  try {
    const stats = statfsSync(dir);
    const reserve = Math.min(RESERVE_MAX_BYTES, (stats.blocks * stats.bsize) / 10);
    return stats.bavail * stats.bsize - reserve;
  } catch {
    return Infinity;
  }
}

export interface OutputFileOptions {
  path: string;
  /** Bytes kept; 0: no cap. */
  maxBytes: number;
  /** Called once, when the first byte is discarded (cap reached or the file could not be written). */
  onTruncated(reason: string): void;
}

export interface OutputFile {
  /** Resolves with the bytes the task wrote to the stream (kept or not) when the stream closes. */
  closed: Promise<number>;
}

/** Why a stream of the file at `path` was cut, as `status` says it (`*_truncated_reason`). */
export function cutReason(cut: OutputCut, path: string, maxBytes: number): string {
  if (cut.cause === 'cap') return `the cap of ${maxBytes} bytes was reached`;
  if (cut.cause === 'write') return `writing ${path} failed: ${cut.error}`;
  return `the disk of ${dirname(path)} is nearly full: output stops while less than its reserve is free, so the task registry can still be written`;
}

/** A task's output files (what TaskSpec says of them) as its shim writes them. */
type OutputSpec = Pick<TaskSpec, 'stdoutPath' | 'stderrPath' | 'maxOutputBytes'>;

/**
 * Pumps one stream of a task into its file open at `fd` (closed at once when the task has no such
 * stream); resolves with the bytes the task wrote to it. Each cut is told to `onTruncated`.
 */
export function pumpOutput(
  source: Readable | null,
  fd: number,
  stream: StreamName,
  spec: OutputSpec,
  onTruncated: (stream: StreamName, reason: string) => void,
): Promise<number> {
  if (source === null) {
    closeSync(fd);
    return Promise.resolve(0);
  }
  const path = stream === 'stdout' ? spec.stdoutPath : spec.stderrPath;
  return pumpToFile(source, fd, {
    path,
    maxBytes: spec.maxOutputBytes,
    onTruncated: (reason) => onTruncated(stream, reason),
  }).closed;
}

/** The output files (open at `fds`) as a shim writes them: each cut told to `onTruncated` with its reason. */
export function shimOutputFiles(
  fds: [number, number],
  spec: OutputSpec,
  onTruncated: (stream: StreamName, reason: string) => void,
): OutputFiles {
  const { stdoutPath, stderrPath, maxOutputBytes: maxBytes } = spec;
  return {
    fds,
    maxBytes,
    onCut: (stream, cut) =>
      onTruncated(stream, cutReason(cut, stream === 'stdout' ? stdoutPath : stderrPath, maxBytes)),
  };
}

/**
 * Once the shim has written the output files (its copies of `fds` are its own; ours are closed
 * here): the bytes the task wrote to each stream, or, if the shim was killed before it could say,
 * what the files hold.
 */
export async function shimOutputWritten(launched: LaunchedTask, fds: [number, number]): Promise<[number, number]> {
  // What the files hold is read through our fds, not their paths: a path may lead elsewhere by now.
  const sizes = fds.map((fd) => fstatSync(fd).size) as [number, number];
  for (const fd of fds) closeSync(fd);
  return (await launched.outputBytes) ?? sizes;
}

/**
 * Makes a task's two output files anew, mode 0600, on libuv's thread pool: creating a file can keep
 * the kernel busy for a millisecond or more (ext4 here, soon after many files were deleted: 0.6 ms
 * of CPU a file in a loop, 1.8 ms a file in a daemon's worker thread, measured), and the thread
 * that opens them carries every other task's reports. Both at once, each task's opens beside any
 * other's: one open after another throughout the thread cost short-tasks a sixth of its rate here.
 * Throws with the path in the message, the other file closed.
 */
export async function openOutputFiles(paths: [string, string]): Promise<[number, number]> {
  const opened = await Promise.allSettled(paths.map(openOutputFile));
  const fds = opened.flatMap((file) => (file.status === 'fulfilled' ? [file.value] : []));
  const failed = opened.find((file) => file.status === 'rejected');
  if (failed === undefined) return [fds[0]!, fds[1]!];
  for (const fd of fds) closeSync(fd);
  throw failed.reason;
}

/**
 * Whatever is at the path goes first, and the file is made with O_EXCL, following no symlink: what a
 * task put there (a FIFO, whose open would wait for a reader; a symlink or a hard link to a file of
 * the host, which O_TRUNC would empty) is never opened. One put there again between the two fails
 * the open (EEXIST), and with it the task's start.
 */
async function openOutputFile(path: string): Promise<number> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
  return new Promise((resolve, reject) =>
    open(path, CREATE_FLAGS, 0o600, (error, fd) => (error ? reject(error) : resolve(fd))),
  );
}

const CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY;

/** Pumps `source` into the file open at `fd`, which it closes at the stream's end. */
export function pumpToFile(source: Readable, fd: number, options: OutputFileOptions): OutputFile {
  let produced = 0;
  let kept = 0;
  let discarding = false;
  let nextCheck = 0;
  const dir = dirname(options.path);
  const stopKeeping = (reason: string) => {
    if (discarding) return;
    discarding = true;
    options.onTruncated(reason);
  };
  source.on('data', (chunk: Buffer) => {
    produced += chunk.length;
    if (discarding) return;
    if (kept >= nextCheck) {
      const spare = beyondReserve(dir);
      if (spare < 0) return stopKeeping(cutReason({ cause: 'reserve' }, options.path, options.maxBytes));
      nextCheck = kept + Math.min(RESERVE_CHECK_BYTES, Math.floor(spare / 2) + 1);
    }
    const room = options.maxBytes === 0 ? chunk.length : Math.min(chunk.length, options.maxBytes - kept);
    try {
      // Synchronous on purpose: the file is in the page cache, and the pipe waits while we write.
      for (let offset = 0; offset < room;) offset += writeSync(fd, chunk, offset, room - offset);
      kept += Math.max(room, 0);
    } catch (error) {
      stopKeeping(cutReason({ cause: 'write', error: (error as Error).message }, options.path, options.maxBytes));
      return;
    }
    if (room < chunk.length) stopKeeping(cutReason({ cause: 'cap' }, options.path, options.maxBytes));
  });
  const closed = new Promise<number>((resolve) => {
    source.once('close', () => {
      closeSync(fd);
      resolve(produced);
    });
  });
  // A read error ends the stream like EOF; what was written stays.
  source.on('error', () => {});
  return { closed };
}
