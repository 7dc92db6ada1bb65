// The output cap: writes one stream of a task into its file as it arrives, up to the cap; the rest is discarded.
import { closeSync, openSync, statfsSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';

/**
 * Output never takes the last of the state dir's disk, which the registry needs: writing stops
 * while less than this is free (64 MiB, or a tenth of a smaller file system). Looked at once per
 * RESERVE_CHECK_BYTES written, so it costs a statfs per MiB.
 */
const RESERVE_MAX_BYTES = 64 * 1024 * 1024;
const RESERVE_CHECK_BYTES = 1024 * 1024;

/** Whether the file system of `dir` has less than its reserve free; false when that cannot be read. */
function belowReserve(dir: string): boolean {
  try {
    const stats = statfsSync(dir);
    const reserve = Math.min(RESERVE_MAX_BYTES, (stats.blocks * stats.bsize) / 10);
    return stats.bavail * stats.bsize < reserve;
  } catch {
    return false;
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

/** Opens (and empties) `path` with mode 0600 and returns the fd; throws with the path in the message. */
export function openOutputFile(path: string): number {
  return openSync(path, 'w', 0o600);
}

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
      nextCheck = kept + RESERVE_CHECK_BYTES;
      if (belowReserve(dir))
        return stopKeeping(
          `the disk of ${dir} is nearly full: output stops while less than its reserve is free, so the task registry can still be written`,
        );
    }
    const room = options.maxBytes === 0 ? chunk.length : Math.min(chunk.length, options.maxBytes - kept);
    try {
      // Synchronous on purpose: the file is in the page cache, and the pipe waits while we write.
      for (let offset = 0; offset < room;) offset += writeSync(fd, chunk, offset, room - offset);
      kept += Math.max(room, 0);
    } catch (error) {
      stopKeeping(`writing ${options.path} failed: ${(error as Error).message}`);
      return;
    }
    if (room < chunk.length) stopKeeping(`the cap of ${options.maxBytes} bytes was reached`);
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
