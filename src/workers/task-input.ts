// A task's standard input as the worker writes it: the write end of a pipe, or the master side of
// the task's terminal, where text is typed as if at a keyboard.
import type { Writable } from 'node:stream';

/** VEOF (Ctrl-D): a terminal's end of file. It ends a read only at the start of a line; mid-line it first hands over the partial line. */
const END_OF_FILE = '\x04';

/** libuv's count of the bytes of the write in flight that the fd has not taken yet (a stream handle's own field). */
type StreamHandle = { writeQueueSize?: number };

export class TaskInput {
  private isClosed = false;
  private atLineStart = true;
  /** Byte sizes of the writes not yet completed, oldest (the one in flight) first. */
  private readonly unfinished: number[] = [];

  private constructor(
    private readonly stream: Writable,
    private readonly terminal: boolean,
  ) {
    // A task that exits, or closes its stdin, without reading fails a write with EPIPE (EIO on a
    // terminal): the write's callback reports it; unhandled, the error would end the worker thread.
    stream.on('error', () => {});
  }

  /** Stdin through a pipe: end of file closes the pipe. */
  static pipe(stream: Writable): TaskInput {
    return new TaskInput(stream, false);
  }

  /** Stdin on a terminal: end of file is typed (Ctrl-D); the terminal stays, for the output. */
  static terminal(master: Writable): TaskInput {
    return new TaskInput(master, true);
  }

  /** True once end of file was sent: nothing more can be written. */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Bytes written but not yet taken by the pipe or terminal (the task is not reading). */
  get pendingBytes(): number {
    if (this.unfinished.length === 0) return 0;
    const queued = (this.stream as unknown as { _handle?: StreamHandle })._handle?.writeQueueSize;
    const waiting = this.unfinished.slice(1).reduce((sum, size) => sum + size, 0);
    return (typeof queued === 'number' ? queued : this.unfinished[0]!) + waiting;
  }

  /** Writes `text`, then end of file when `eof`. Resolves once the pipe or terminal has taken it all; rejects if it cannot. */
  write(text: string, eof: boolean): Promise<void> {
    if (this.isClosed) return Promise.reject(new Error('stdin was already closed'));
    if (text.length > 0) this.atLineStart = text.endsWith('\n') || text.endsWith('\r');
    let data = text;
    if (eof) {
      this.isClosed = true;
      if (this.terminal) data += this.atLineStart ? END_OF_FILE : END_OF_FILE + END_OF_FILE;
    }
    this.unfinished.push(Buffer.byteLength(data));
    return new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => {
        this.unfinished.shift();
        if (error) reject(error);
        else resolve();
      };
      if (eof && !this.terminal) this.stream.end(data, done);
      else this.stream.write(data, done);
    });
  }

  /** Lets go of the pipe at the task's end (a terminal's master closes with the output it carries). */
  release(): void {
    this.isClosed = true;
    if (!this.terminal) this.stream.destroy();
  }
}
