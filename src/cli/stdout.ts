// stdout as the commands write it: writes queue (a pipe takes them as fast as its reader reads),
// drain() waits for the reader, and the first failed write (EPIPE: the reader has gone) is kept
// so that the command stops instead of crashing, and nothing more is written.

export class CliStdout {
  /** The first error of a write, or null while every write has gone through. */
  failure: NodeJS.ErrnoException | null = null;

  constructor(private readonly stream: NodeJS.WriteStream = process.stdout) {
    // Without a listener the error would be thrown from the event loop as an unhandled 'error'.
    stream.on('error', (error: Error) => this.fail(error));
  }

  /** Queues `chunk` (text as UTF-8, bytes as they are); dropped once a write has failed. */
  write(chunk: string | Uint8Array): void {
    if (this.failure === null) this.stream.write(chunk, (error) => this.fail(error));
  }

  /** Whether a write has failed, so nothing more reaches the reader. */
  get closed(): boolean {
    return this.failure !== null;
  }

  /**
   * Resolves once everything written has been taken by the reader, or a write has failed. A write
   * fails after it returns (EPIPE comes in its callback), so this is where a failure shows.
   */
  drain(): Promise<void> {
    if (this.failure !== null) return Promise.resolve();
    // A write's callback runs after the callbacks of every write before it.
    return new Promise((resolve) => this.stream.write('', () => resolve()));
  }

  private fail(error: Error | null | undefined): void {
    if (error) this.failure ??= error as NodeJS.ErrnoException;
  }
}
