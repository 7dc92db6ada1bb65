// A task's output file read here, byte for byte, when the CLI runs where the daemon's files are
// (the same machine, a user who may read them, or a task's read-only view of the state dir):
// the daemon's output tool answers in text, which cannot carry every byte (a CR before a newline
// is dropped, a byte that is not UTF-8 becomes U+FFFD).
import { dirname, isAbsolute } from 'node:path';
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import type { CommandContext } from './command.js';

const CHUNK_BYTES = 256 * 1024;

/** One output file of a task, copied to stdout from an offset as it grows. */
export class OutputFile {
  private fd: number | null = null;
  /** Where the next copy starts. */
  offset = 0;

  private constructor(private readonly path: string) {}

  /**
   * The file at `path`, which the daemon says holds `keptBytes`; or why it cannot be read here:
   * not there, not readable, or holding fewer bytes (another machine's file of the same name).
   * A file not created yet (a pending task's) is opened at the first copy.
   */
  static open(path: string, keptBytes: number): OutputFile | { reason: string } {
    if (!isAbsolute(path)) return { reason: 'not an absolute path' };
    const file = new OutputFile(path);
    const error = file.tryOpen();
    if (error === 'ENOENT' && keptBytes === 0 && existsSync(dirname(path))) return file;
    if (error !== null) return { reason: error };
    const size = file.size();
    if (size < keptBytes) {
      file.close();
      return { reason: `it holds ${size} bytes where the daemon's holds ${keptBytes}` };
    }
    return file;
  }

  /** Its size now; 0 before it exists. */
  size(): number {
    if (this.fd === null && this.tryOpen() !== null) return 0;
    return fstatSync(this.fd!).size;
  }

  /** Starts the copy `lines` lines before its end, as tail -n counts them (an unfinished last line is one). */
  startAtLastLines(lines: number): void {
    const size = this.size();
    this.offset = size;
    if (lines === 0) return;
    let end = size;
    if (end > 0 && readAt(this.fd!, end - 1, 1)[0] === 0x0a) end--;
    let found = 0;
    for (let chunkEnd = end; chunkEnd > 0; chunkEnd -= CHUNK_BYTES) {
      const chunkStart = Math.max(0, chunkEnd - CHUNK_BYTES);
      const bytes = readAt(this.fd!, chunkStart, chunkEnd - chunkStart);
      for (let at = bytes.lastIndexOf(0x0a); at !== -1; at = at > 0 ? bytes.lastIndexOf(0x0a, at - 1) : -1) {
        if (++found === lines) {
          this.offset = chunkStart + at + 1;
          return;
        }
      }
    }
    this.offset = 0;
  }

  /** Copies what was written from the offset to the end now; returns how many bytes. Stops early when stdout closes. */
  async copyToEnd(context: CommandContext): Promise<number> {
    const end = this.size();
    const start = this.offset;
    while (this.offset < end && !context.stdoutClosed()) {
      const bytes = readAt(this.fd!, this.offset, Math.min(CHUNK_BYTES, end - this.offset));
      if (bytes.length === 0) break;
      context.write(bytes);
      this.offset += bytes.length;
      await context.drain();
    }
    return this.offset - start;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** Opens the file; null, or the error's code. */
  /** Opened without waiting and following no symlink: what a task may have put in the file's place (a FIFO) is refused, never waited on. */
  private tryOpen(): string | null {
    try {
      const fd = openSync(
        this.path,
        constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY,
      );
      if (fstatSync(fd).isFile()) this.fd = fd;
      else closeSync(fd);
      return this.fd === fd ? null : 'not a regular file';
    } catch (error) {
      return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    }
  }
}

/** Up to `length` bytes of `fd` from `offset` (fewer at its end). */
function readAt(fd: number, offset: number, length: number): Buffer {
  const buffer = Buffer.allocUnsafe(length);
  return buffer.subarray(0, readSync(fd, buffer, 0, length, offset));
}
