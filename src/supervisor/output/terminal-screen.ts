// What a pty task's terminal shows now, as a person would see it: a headless terminal emulator
// (@xterm/headless) fed the task's output from its file, made at the first screen asked of a run,
// then fed only what was written since (see bench/screen-cost). It runs on the main thread, so its
// work is bounded: the output goes through ScreenInput (after which no character costs more than
// a pass over the screen), in slices that take about 10 ms at most (xterm.js turns the event loop
// every 12 ms between them), and one call feeds for 2 s at most; the rest waits for the next call.
import type { Terminal } from '@xterm/headless';
import { createRequire } from 'node:module';
import { StringDecoder } from 'node:string_decoder';
import { performance } from 'node:perf_hooks';
import { ScreenTooCostlyError } from '../../errors.js';
import { fileSize, readAt } from './growing-file.js';
import { ScreenInput } from './screen-input.js';

/** Terminals kept, most recently asked last: about 140 KB of heap each at 120x40 ... */
const KEPT_TERMINALS = 32;
/** ... and a million cells in all (a terminal of run's largest size; 25 MB, a cell taking 12 bytes in each of two buffers). */
const KEPT_CELLS = 1_000_000;
/** Bytes read from the file at a time. */
const READ_BYTES = 256 * 1024;
/**
 * A slice takes about 10 ms at most: a character can cost a pass over every cell (ESC c, ESC # 8,
 * ESC [ 2 J: 3 to 7 ns a cell here), and ESC c (a reset) 8 to 16 µs more whatever the size, which
 * the cap bounds on small terminals (a 20x5 one would take 15,000 characters a slice).
 */
const SLICE_CELL_CHARS = 1_500_000;
const MIN_SLICE_CHARS = 4;
const MAX_SLICE_CHARS = 256;
/** How long one call may feed a terminal. */
const FEED_BUDGET_MS = 2000;

export interface Screen {
  /** One line per row, trailing spaces trimmed. */
  text: string;
  cursor: { row: number; col: number };
  rows: number;
  cols: number;
  /** A full-screen program (vim, less, top) switched to the alternate screen. */
  alternate_screen: boolean;
}

interface Emulator {
  terminal: Terminal;
  cells: number;
  input: ScreenInput;
  decoder: StringDecoder;
  /** Bytes of the file read so far; of their text, what is not fed yet, from `at`. */
  read: number;
  pending: string;
  at: number;
  /** The feed under way (one at a time per terminal), and the calls waiting on it: a busy terminal is not dropped. */
  feeding: Promise<void>;
  callers: number;
}

/**
 * The emulator's module, loaded at the first screen asked for: a daemon that draws none does not
 * pay for it. Loaded by require, which holds the main thread 25 to 40 ms here; import() held it 125
 * to 230 ms.
 */
let emulatorModule: typeof import('@xterm/headless') | null = null;
const loadEmulator = () =>
  (emulatorModule ??= createRequire(import.meta.url)('@xterm/headless') as typeof import('@xterm/headless'));

export class TerminalScreens {
  /** By run key, the most recently asked last. */
  private readonly emulators = new Map<string, Emulator>();

  /**
   * The screen of task `id`'s run `runKey`, whose terminal (`cols` by `rows`) wrote to `path`,
   * once fed all that is there now; ScreenTooCostlyError when that takes more than one call's budget.
   */
  async screenOf(id: string, runKey: string, path: string, cols: number, rows: number): Promise<Screen> {
    const { Terminal } = loadEmulator();
    let emulator = this.emulators.get(runKey);
    this.emulators.delete(runKey);
    if (emulator === undefined || fileSize(path) < emulator.read) {
      emulator?.terminal.dispose();
      emulator = newEmulator(new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true }));
    }
    const fed = emulator;
    fed.callers++;
    this.emulators.set(runKey, fed);
    this.dropIdle();
    const caughtUp = fed.feeding.then(() => feed(fed, path));
    fed.feeding = caughtUp.then(
      () => {},
      () => {},
    );
    try {
      if (!(await caughtUp)) {
        const drawn = Math.max(0, fed.read - Buffer.byteLength(fed.pending.slice(fed.at)));
        throw new ScreenTooCostlyError(id, `${cols}x${rows}`, drawn, fileSize(path), FEED_BUDGET_MS);
      }
      return render(fed.terminal);
    } finally {
      fed.callers--;
    }
  }

  /** Drops the least recently asked terminals nobody waits on while more are kept than allowed. */
  private dropIdle(): void {
    let cells = 0;
    for (const emulator of this.emulators.values()) cells += emulator.cells;
    for (const [runKey, emulator] of this.emulators) {
      if (this.emulators.size <= 1 || (this.emulators.size <= KEPT_TERMINALS && cells <= KEPT_CELLS)) return;
      if (emulator.callers > 0) continue;
      emulator.terminal.dispose();
      this.emulators.delete(runKey);
      cells -= emulator.cells;
    }
  }
}

function newEmulator(terminal: Terminal): Emulator {
  const cells = terminal.cols * terminal.rows;
  const input = new ScreenInput(Math.max(terminal.cols, terminal.rows));
  const decoder = new StringDecoder('utf8');
  return { terminal, cells, input, decoder, read: 0, pending: '', at: 0, feeding: Promise.resolve(), callers: 0 };
}

/** Feeds what the file holds past what was read, for one call's budget; whether it caught up. */
async function feed(emulator: Emulator, path: string): Promise<boolean> {
  const deadline = performance.now() + FEED_BUDGET_MS;
  const size = fileSize(path);
  for (;;) {
    if (emulator.at >= emulator.pending.length) {
      emulator.pending = ''; // a kept terminal holds no text it has taken
      emulator.at = 0;
      if (emulator.read >= size) return true;
      if (performance.now() > deadline) return false;
      // A read may leave no text to write (a string's body is dropped), and then no slice turns the
      // event loop: each read turns it once, so that the whole file is never filtered in one step.
      if (emulator.read > 0) await new Promise(setImmediate);
      const bytes = readAt(path, emulator.read, Math.min(READ_BYTES, size - emulator.read));
      if (bytes.length === 0) return true;
      emulator.read += bytes.length;
      // The decoder keeps a character cut at the end for the next read; ScreenInput, a sequence.
      emulator.pending = emulator.input.filter(emulator.decoder.write(bytes));
      emulator.at = 0;
    }
    await writeSlices(emulator, deadline);
    if (emulator.at < emulator.pending.length) return false;
  }
}

/** Writes the pending text a slice at a time until it is all taken or `deadline` has passed. */
function writeSlices(emulator: Emulator, deadline: number): Promise<void> {
  const slice = Math.min(MAX_SLICE_CHARS, Math.max(MIN_SLICE_CHARS, Math.floor(SLICE_CELL_CHARS / emulator.cells)));
  return new Promise((resolve) => {
    // Called back as each slice is parsed, inside xterm.js's own loop, which yields every 12 ms.
    const next = () => {
      if (emulator.at >= emulator.pending.length || performance.now() > deadline) return resolve();
      const piece = emulator.pending.slice(emulator.at, emulator.at + slice);
      emulator.at += piece.length;
      emulator.terminal.write(piece, next);
    };
    next();
  });
}

function render(terminal: Terminal): Screen {
  const buffer = terminal.buffer.active;
  const lines: string[] = [];
  for (let row = 0; row < terminal.rows; row++)
    lines.push((buffer.getLine(buffer.baseY + row)?.translateToString(true) ?? '').trimEnd());
  return {
    text: lines.join('\n'),
    cursor: { row: buffer.cursorY, col: buffer.cursorX },
    rows: terminal.rows,
    cols: terminal.cols,
    alternate_screen: buffer.type === 'alternate',
  };
}
