// The worker's side of a pty task's terminal: the master, which carries the task's output one way
// and its input the other, and one fd of the slave, held until the task is gone (and for a
// sandboxed task, the detached devpts mount the terminal is in, which its leader attaches).
//
// Holding the slave is what keeps the output whole. When the last fd of a pty's slave closes,
// Linux ends reads on the master with EIO and drops what the master had not read yet (measured
// here: 14 of 21 runs of `seq 1 20000` lost their last kilobytes when the reader saw the end that
// way). So the terminal is never hung up under the task: once nothing of the task is left, a
// sentinel is written to the slave, the output is read up to it, and only then is it all closed.
import { randomBytes } from 'node:crypto';
import { closeSync, constants as fsConstants, openSync, writeSync } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { ReadStream as TerminalStream } from 'node:tty';
import { loadNative, nativeAddon } from '../process/native.js';
import type { OpenedTerminal } from '../process/terminals.js';
import { TerminalInput } from './task-input.js';
import { withTimeout } from '../with-timeout.js';

/** How long the sentinel may take to come through (a task may have left the terminal stopped with Ctrl-S). */
const SENTINEL_WAIT_MS = 2000;
/** How soon a sentinel write the terminal refused (its output buffer is full) is tried again. */
const SENTINEL_RETRY_MS = 10;

export class TaskTerminal {
  /** The master, read for the task's output (through `output`). */
  private readonly master: TerminalStream;
  /** The task's stdin: typed into the master. */
  readonly input: TerminalInput;
  private readonly sink = new PassThrough();
  /** The task's output as read from the master, ending once the task is gone and all of it was read. */
  readonly output: Readable = this.sink;
  /** The slave fd the task's stdio is made from; this side's copy stays open until finish (-1 after). */
  slaveFd: number;
  /** A sandboxed task's detached devpts mount (the shim's -D), until close; null: the host's devpts. */
  devptsFd: number | null;
  private readonly sentinel = Buffer.from(`HIVE-BASH-END-${randomBytes(12).toString('hex').toUpperCase()}`);
  /** After the sentinel was written: what came since, up to it. */
  private tail: Buffer[] | null = null;
  private readonly sawSentinel: Promise<void>;
  private markSawSentinel!: () => void;
  private finished = false;

  /** Takes over the fds the supervisor opened, and opens the slave at `path`; throws if it cannot. */
  constructor(terminal: OpenedTerminal) {
    this.master = new TerminalStream(terminal.masterFd);
    this.input = new TerminalInput(terminal.masterFd);
    this.devptsFd = terminal.devptsFd;
    try {
      this.slaveFd = openSync(terminal.path, fsConstants.O_RDWR | fsConstants.O_NOCTTY);
    } catch (error) {
      this.close();
      throw error;
    }
    this.sawSentinel = new Promise<void>((resolve) => (this.markSawSentinel = resolve));
    this.master.on('data', (chunk: Buffer) => {
      if (this.tail === null) {
        this.sink.write(chunk);
        return;
      }
      this.tail.push(chunk);
      if (Buffer.concat(this.tail).includes(this.sentinel)) this.markSawSentinel();
    });
    // Only a hang-up from elsewhere ends the master early: what was read stays.
    this.master.on('error', () => this.markSawSentinel());
    this.master.on('close', () => this.markSawSentinel());
  }

  /** For a task that is not interactive: its terminal answers every line-mode read with end of file. */
  keepAtEndOfFile(): void {
    const native = loadNative();
    // Without the addon the terminal's mode cannot be read: the Ctrl-D typed at the start is all.
    if ('addon' in native) this.input.keepAtEndOfFile(() => native.addon.lineMode(this.slaveFd));
  }

  /** Once nothing of the task is left: reads the output to its end, then closes the terminal. */
  async finish(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.tail = [];
    const deadline = Date.now() + SENTINEL_WAIT_MS;
    const written = await this.writeSentinel(deadline);
    if (written === this.sentinel.length) {
      await withTimeout(this.sawSentinel, Math.max(0, deadline - Date.now()), undefined);
    }
    const rest = Buffer.concat(this.tail);
    let end = rest.indexOf(this.sentinel);
    // Not seen whole: what came of it is the sentinel's start, not the task's output.
    if (end === -1)
      end =
        written > 0 && rest.subarray(-written).equals(this.sentinel.subarray(0, written))
          ? rest.length - written
          : rest.length;
    this.sink.end(rest.subarray(0, end));
    this.close();
  }

  /**
   * Writes the sentinel through a non-blocking fd of its own (the task's stdio must stay
   * blocking): a full or stopped terminal must not block this thread. What does not fit is tried
   * again as the output is read, until the deadline. Returns the bytes written.
   */
  private async writeSentinel(deadline: number): Promise<number> {
    let fd = -1;
    let written = 0;
    try {
      // Opened again through the slave fd held here: a sandboxed task's terminal has no path outside its namespace.
      fd = openSync(
        `/proc/self/fd/${this.slaveFd}`,
        fsConstants.O_WRONLY | fsConstants.O_NOCTTY | fsConstants.O_NONBLOCK,
      );
      while (written < this.sentinel.length && !this.master.destroyed && Date.now() < deadline) {
        try {
          written += writeSync(fd, this.sentinel, written);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') break;
          await sleep(SENTINEL_RETRY_MS);
        }
      }
    } catch {
      // the terminal cannot be opened again: take what is there
    } finally {
      if (fd !== -1) closeSync(fd);
    }
    return written;
  }

  /** Closes both sides and ends the output (idempotent): after finish, or when the task never started. */
  close(): void {
    this.finished = true;
    // Input first: no write may reach the master's fd number once it is closed (and reused).
    this.input.stop();
    if (!this.sink.writableEnded) this.sink.end();
    this.master.destroy();
    if (this.slaveFd !== -1) {
      closeSync(this.slaveFd);
      this.slaveFd = -1;
    }
    if (this.devptsFd !== null) {
      nativeAddon().close(this.devptsFd);
      this.devptsFd = null;
    }
  }
}
