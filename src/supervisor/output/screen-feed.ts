// Feeding a screen's emulator the output from its file, on the main thread and so bounded: the
// output goes through ScreenInput (after which no character costs more than a pass over the
// screen), in slices that take about 10 ms at most, in turns shared with every other screen being
// drawn (drawing-turns.ts: a read, or slices for about 10 ms), until a deadline; the rest waits
// for the next feed. Past its task's budget of screen work (screen-work.ts), a feed skips to a
// recent part of the output, small enough to be drawn in about a second whatever it holds.
import type { Terminal } from '@xterm/headless';
import { StringDecoder } from 'node:string_decoder';
import { performance } from 'node:perf_hooks';
import type { DrawingTurns } from './drawing-turns.js';
import { fileSize, readAt } from './growing-file.js';
import { ScreenInput } from './screen-input.js';

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
/** How long a turn writes slices before the next screen's turn: the 10 ms of a slice at most more. */
const TURN_MS = 10;
/** The recent part a skip draws: a hundred slices' worth, about 1 s at most (150 bytes on a 1000x1000 terminal, 78 KB on 80x24) ... */
const RECENT_CELL_CHARS = 100 * SLICE_CELL_CHARS;
/** ... and at least this much, where even a pass over the screen for each character is cheap enough. */
const MIN_RECENT_BYTES = 64;
const ESC = 0x1b;
const NEWLINE = 0x0a;
/** CAN: ends any sequence the emulator's parser is in the middle of, and does nothing else. */
const CANCEL = '\x18';

export interface Emulator {
  terminal: Terminal;
  cells: number;
  input: ScreenInput;
  decoder: StringDecoder;
  /** Bytes of the file read so far; of their text, what is not fed yet, from `at`. */
  read: number;
  pending: string;
  at: number;
  /** Bytes of the output skipped, never drawn. */
  skipped: number;
  /** The feed under way (one at a time per terminal), and the calls waiting on it: a busy terminal is not dropped. */
  feeding: Promise<void>;
  callers: number;
}

export function newEmulator(terminal: Terminal): Emulator {
  const cells = terminal.cols * terminal.rows;
  return {
    terminal,
    cells,
    input: new ScreenInput(Math.max(terminal.cols, terminal.rows)),
    decoder: new StringDecoder('utf8'),
    read: 0,
    pending: '',
    at: 0,
    skipped: 0,
    feeding: Promise.resolve(),
    callers: 0,
  };
}

/** Bytes of the file the emulator has drawn: those read, less the text read and not fed yet. */
export function drawnBytes(emulator: Emulator): number {
  return Math.max(0, emulator.read - Buffer.byteLength(emulator.pending.slice(emulator.at)));
}

/**
 * Feeds what the file holds past what was read until `deadline` (performance.now()), a turn at a
 * time; whether it caught up.
 */
export async function feed(emulator: Emulator, path: string, deadline: number, turns: DrawingTurns): Promise<boolean> {
  const size = fileSize(path);
  for (;;) {
    const caughtUp = await turns.take(() => feedTurn(emulator, path, size, deadline));
    if (caughtUp !== undefined) return caughtUp;
  }
}

/** One turn of a feed: a read, or slices for a turn; whether it caught up, once that is known. */
async function feedTurn(
  emulator: Emulator,
  path: string,
  size: number,
  deadline: number,
): Promise<boolean | undefined> {
  if (emulator.at < emulator.pending.length) {
    await writeSlices(emulator, Math.min(deadline, performance.now() + TURN_MS));
    return emulator.at < emulator.pending.length && performance.now() > deadline ? false : undefined;
  }
  emulator.pending = ''; // a kept terminal holds no text it has taken
  emulator.at = 0;
  if (emulator.read >= size) return true;
  if (performance.now() > deadline) return false;
  // A read may leave no text to write (a string's body is dropped): each read is a turn, so that
  // the whole file is never filtered in one step.
  const bytes = readAt(path, emulator.read, Math.min(READ_BYTES, size - emulator.read));
  if (bytes.length === 0) return true;
  emulator.read += bytes.length;
  // The decoder keeps a character cut at the end for the next read; ScreenInput, a sequence.
  emulator.pending = emulator.input.filter(emulator.decoder.write(bytes));
  return undefined;
}

/**
 * Skips what is left to draw but the recent part of the file (when more is left), so that the
 * next feed draws only that: from its first ESC or newline, where a sequence or a line starts,
 * else from its first whole character. What the screen shows stays, drawn over by that part.
 */
export function skipToRecent(emulator: Emulator, path: string): void {
  const recent = Math.min(READ_BYTES, Math.max(MIN_RECENT_BYTES, Math.floor(RECENT_CELL_CHARS / emulator.cells)));
  const from = fileSize(path) - recent;
  const drawn = drawnBytes(emulator);
  if (from <= drawn) return;
  const bytes = readAt(path, from, recent);
  let start = Math.min(...[bytes.indexOf(ESC), bytes.indexOf(NEWLINE)].map((at) => (at === -1 ? bytes.length : at)));
  if (start === bytes.length) for (start = 0; start < bytes.length && (bytes[start]! & 0xc0) === 0x80; start++);
  emulator.skipped += from + start - drawn;
  emulator.read = from + start;
  emulator.pending = CANCEL;
  emulator.at = 0;
  emulator.decoder = new StringDecoder('utf8');
  emulator.input = new ScreenInput(Math.max(emulator.terminal.cols, emulator.terminal.rows));
}

/** Writes the pending text a slice at a time until it is all taken or `deadline` has passed. */
function writeSlices(emulator: Emulator, deadline: number): Promise<void> {
  const slice = Math.min(MAX_SLICE_CHARS, Math.max(MIN_SLICE_CHARS, Math.floor(SLICE_CELL_CHARS / emulator.cells)));
  return new Promise((resolve) => {
    // Called back as each slice is parsed, inside xterm.js's own loop.
    const next = () => {
      if (emulator.at >= emulator.pending.length || performance.now() > deadline) return resolve();
      const piece = emulator.pending.slice(emulator.at, emulator.at + slice);
      emulator.at += piece.length;
      emulator.terminal.write(piece, next);
    };
    next();
  });
}
