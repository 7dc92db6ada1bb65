// What a pty task's terminal shows now, as a person would see it: a headless terminal emulator
// (@xterm/headless) fed the task's output from its file, made at the first screen asked of a run,
// then fed only what was written since (see bench/screen-cost). It runs on the main thread, so its
// work is bounded (screen-feed.ts): screens draw in turns, one at a time (drawing-turns.ts), one
// call feeds for 2 s at most, and the rest waits for the next call; past its task's budget of
// screen work a minute (screen-work.ts), a call draws only a recent part of what is left, so that
// a flood of costly output gets an answer.
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { ScreenTooCostlyError } from '../../errors.js';
import { DrawingTurns } from './drawing-turns.js';
import { fileSize } from './growing-file.js';
import { drawnBytes, feed, newEmulator, skipToRecent, type Emulator } from './screen-feed.js';
import { ScreenWork } from './screen-work.js';

/** Terminals kept, most recently asked last: about 140 KB of heap each at 120x40 ... */
const KEPT_TERMINALS = 32;
/** ... and a million cells in all (a terminal of run's largest size; 25 MB, a cell taking 12 bytes in each of two buffers). */
const KEPT_CELLS = 1_000_000;
/**
 * The cells of the terminals being drawn at once (two of run's largest): past it, a call that needs a new terminal
 * waits for another call's end. 32 calls at once on 1000x1000 terminals took the daemon from 129
 * to 642 MB, each holding a terminal of its own.
 */
const LIVE_CELLS = 2_000_000;
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
  /** Bytes of the output skipped, never drawn (present when some were). */
  skipped_bytes?: number;
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
  private readonly work = new ScreenWork();
  private readonly turns = new DrawingTurns();
  /** Calls waiting for room to make a terminal in. */
  private readonly roomWaiters: Array<() => void> = [];

  /**
   * The screen of task `id`'s run `runKey`, whose terminal (`cols` by `rows`) wrote to `path`,
   * once fed all that is there now; ScreenTooCostlyError when that takes more than one call's budget.
   */
  async screenOf(id: string, runKey: string, path: string, cols: number, rows: number): Promise<Screen> {
    let emulator: Emulator | { room: Promise<void> };
    // Made in a turn (a 1000x1000 terminal takes 11 to 22 ms), and only once there is room.
    while ('room' in (emulator = await this.turns.take(() => this.emulatorFor(runKey, path, cols, rows))))
      await emulator.room;
    const drawn = emulator.feeding.then(() => this.draw(id, emulator, path));
    emulator.feeding = drawn.then(
      () => {},
      () => {},
    );
    try {
      if (!(await drawn))
        throw new ScreenTooCostlyError(id, `${cols}x${rows}`, drawnBytes(emulator), fileSize(path), FEED_BUDGET_MS);
      return await this.turns.take(() => render(emulator));
    } finally {
      emulator.callers--;
      this.dropIdle();
      for (const wake of this.roomWaiters.splice(0)) wake();
    }
  }

  /**
   * Run `runKey`'s emulator, taken by one more caller: the kept one, else a new one; or, when a new
   * one would take the terminals being drawn past LIVE_CELLS, the next call's end to wait for.
   */
  private emulatorFor(runKey: string, path: string, cols: number, rows: number): Emulator | { room: Promise<void> } {
    let emulator = this.emulators.get(runKey);
    if (emulator === undefined || fileSize(path) < emulator.read) {
      let busyCells = 0;
      for (const other of this.emulators.values()) if (other.callers > 0) busyCells += other.cells;
      if (busyCells > 0 && busyCells + cols * rows > LIVE_CELLS)
        return { room: new Promise((resolve) => this.roomWaiters.push(resolve)) };
      emulator?.terminal.dispose();
      const { Terminal } = loadEmulator();
      emulator = newEmulator(new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true }));
    }
    this.emulators.delete(runKey);
    emulator.callers++;
    this.emulators.set(runKey, emulator);
    this.dropIdle();
    return emulator;
  }

  /**
   * Feeds task `id`'s emulator for one call; whether there is a screen to show. While the task has
   * a call's worth of work left, that is whether it caught up; past it, what is left but a recent
   * part is skipped first, and the screen is shown however far that part was drawn.
   */
  private async draw(id: string, emulator: Emulator, path: string): Promise<boolean> {
    const started = performance.now();
    const skipping = !this.work.hasLeft(id, FEED_BUDGET_MS);
    if (skipping) skipToRecent(emulator, path);
    const caughtUp = await feed(emulator, path, started + FEED_BUDGET_MS, this.turns);
    this.work.spend(id, performance.now() - started);
    return caughtUp || skipping;
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

function render(emulator: Emulator): Screen {
  const { terminal } = emulator;
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
    ...(emulator.skipped > 0 ? { skipped_bytes: emulator.skipped } : {}),
  };
}
