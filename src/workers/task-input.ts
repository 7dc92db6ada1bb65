// A task's standard input as the worker writes it: the write end of a pipe, or the master side of
// the task's terminal, where text is typed as if at a keyboard.
import { writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { InputRefusal } from './protocol.js';

/**
 * Bytes of input a task's stdin may hold that the task has not read (beyond what its pipe or
 * terminal took): one whole input's worth. More is refused, so input to a task that does not read
 * cannot grow the worker's memory without end.
 */
export const MAX_QUEUED_INPUT_BYTES = 1024 * 1024;

export interface TaskInput {
  /** True once end of file was sent (or the task let go): nothing more can be written. */
  readonly closed: boolean;
  /** Bytes written but not yet taken by the pipe or terminal (the task is not reading). */
  readonly pendingBytes: number;
  /** Writes `text`, then end of file when `eof`. Resolves once the pipe or terminal has taken it all; rejects if it cannot. */
  write(text: string, eof: boolean): Promise<void>;
  /** Stops writing for good: at the task's end, before what it writes to is closed. */
  stop(): void;
}

/** Why `text` is not taken by `input` now (what the task has not read, and it, would pass MAX_QUEUED_INPUT_BYTES), or null. */
export function queueRefusal(input: TaskInput, text: string): InputRefusal | null {
  const queued = input.pendingBytes;
  const bytes = Buffer.byteLength(text);
  if (queued + bytes <= MAX_QUEUED_INPUT_BYTES) return null;
  return {
    code: 'ERR_INPUT_QUEUE_FULL',
    detail: `its stdin holds ${queued} bytes the task has not read, and these ${bytes} would pass the ${MAX_QUEUED_INPUT_BYTES} bytes a task may have queued; nothing was written: wait until it reads (status shows what it printed), or kill it`,
  };
}

/**
 * A pipe's text goes in pieces of this size: the stream counts a write's bytes as pending until
 * all of it is taken, so pieces the size of a pipe's buffer keep that count (writableLength, the
 * stream's public figure) within one piece of what the task has not read.
 */
const PIPE_PIECE_BYTES = 64 * 1024;

/** Stdin through a pipe: end of file closes it. */
export class PipeInput implements TaskInput {
  private isClosed = false;

  constructor(private readonly pipe: Writable) {
    // A task that exits, or closes its stdin, without reading fails a write with EPIPE: the
    // write's callback reports it; unhandled, the error would end the worker thread.
    pipe.on('error', () => {});
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get pendingBytes(): number {
    return this.pipe.writableLength;
  }

  write(text: string, eof: boolean): Promise<void> {
    if (this.isClosed) return Promise.reject(new Error('stdin was already closed'));
    this.isClosed = eof;
    const data = Buffer.from(text);
    return new Promise<void>((resolve, reject) => {
      // The stream completes its writes in order: the last piece's callback is the whole text's.
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      for (let start = 0; start + PIPE_PIECE_BYTES < data.length; start += PIPE_PIECE_BYTES) {
        this.pipe.write(data.subarray(start, start + PIPE_PIECE_BYTES));
      }
      const last = data.subarray(Math.max(0, Math.ceil(data.length / PIPE_PIECE_BYTES) - 1) * PIPE_PIECE_BYTES);
      if (eof) this.pipe.end(last, done);
      else this.pipe.write(last, done);
    });
  }

  stop(): void {
    this.isClosed = true;
    this.pipe.destroy();
  }
}

/** VEOF (Ctrl-D): a terminal's end of file. It ends a read only at the start of a line; mid-line it first hands over the partial line. */
const END_OF_FILE = '\x04';
/** How soon a write the terminal refused (its input buffer is full) is tried again. */
const RETRY_MS = 20;
/** How often a task that is not interactive is given end of file again while its terminal is in line mode. */
const END_OF_FILE_EVERY_MS = 500;

interface QueuedWrite {
  data: Buffer;
  offset: number;
  settle: (error?: Error) => void;
}

/**
 * Stdin on a terminal, written to the master fd directly. A libuv tty stream cannot reopen a pty
 * master, so it writes in blocking mode and spins on a full input buffer, freezing the worker
 * thread. The master is non-blocking (node-pty opens it so): a write takes what fits at once, and
 * the rest stays queued, counted as pending and tried again shortly. Writes are synchronous, so
 * none is ever in flight when the master is closed.
 */
export class TerminalInput implements TaskInput {
  private isClosed = false;
  private stopped = false;
  private atLineStart = true;
  private readonly queue: QueuedWrite[] = [];
  private retry: NodeJS.Timeout | null = null;
  private feeder: NodeJS.Timeout | null = null;

  constructor(private readonly masterFd: number) {}

  get closed(): boolean {
    return this.isClosed || this.stopped;
  }

  get pendingBytes(): number {
    return this.queue.reduce((sum, queued) => sum + queued.data.length - queued.offset, 0);
  }

  write(text: string, eof: boolean): Promise<void> {
    if (this.closed) return Promise.reject(new Error('stdin was already closed'));
    if (text.length > 0) this.atLineStart = text.endsWith('\n') || text.endsWith('\r');
    let data = text;
    if (eof) {
      this.isClosed = true;
      data += this.atLineStart ? END_OF_FILE : END_OF_FILE + END_OF_FILE;
    }
    return this.enqueue(Buffer.from(data));
  }

  /**
   * For a task nobody types to: Ctrl-D again and again while the terminal is in line mode and
   * nothing is queued, so a prompt that asks twice, or one that flushed the first Ctrl-D (a
   * password prompt turning echo off), reads end of file instead of waiting. A program that puts
   * the terminal in raw mode gets nothing: there Ctrl-D is a key, not end of file.
   */
  keepAtEndOfFile(lineMode: () => boolean): void {
    this.feeder = setInterval(() => {
      if (this.queue.length > 0 || this.stopped) return;
      let canonical = false;
      try {
        canonical = lineMode();
      } catch {
        // the terminal is going away
      }
      if (canonical) this.enqueue(Buffer.from(END_OF_FILE)).catch(() => {});
    }, END_OF_FILE_EVERY_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.feeder) clearInterval(this.feeder);
    for (const queued of this.queue.splice(0)) queued.settle(new Error('the task ended'));
  }

  private enqueue(data: Buffer): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ data, offset: 0, settle: (error) => (error ? reject(error) : resolve()) });
      this.pump();
    });
  }

  private pump(): void {
    this.retry = null;
    while (!this.stopped && this.queue.length > 0) {
      const head = this.queue[0]!;
      let written: number;
      try {
        written = writeSync(this.masterFd, head.data, head.offset, head.data.length - head.offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.retry ??= setTimeout(() => this.pump(), RETRY_MS);
          return;
        }
        for (const queued of this.queue.splice(0)) queued.settle(error as Error);
        return;
      }
      head.offset += written;
      if (head.offset < head.data.length) continue;
      this.queue.shift();
      head.settle();
    }
  }
}
