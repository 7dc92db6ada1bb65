// What a pty task's terminal shows now, as a person would see it: a headless terminal emulator
// (@xterm/headless) fed the task's output from its file. It runs on the main thread and only for a
// task whose screen is asked for: made at the first ask, fed from the start of the file, then only
// what was written since, and kept for the most recent few tasks (see bench/screen-cost).
import type { Terminal } from '@xterm/headless';
import { BoundedCache } from '../bounded-cache.js';
import { fileSize, readAt } from './growing-file.js';

/** Terminals kept, most recently asked first: about 140 KB of heap each at 120x40. */
const KEPT_TERMINALS = 32;
/** Bytes fed at a time; the emulator parses about 45 MB/s here, so a turn of the event loop comes every ~20 ms. */
const FEED_BYTES = 1024 * 1024;

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
  /** Bytes of the file fed so far. */
  fed: number;
  /** The feed under way: one at a time per terminal. */
  feeding: Promise<void>;
}

/** The emulator's module, loaded at the first screen asked for: a daemon that draws none does not pay its 11 MB. */
let emulatorModule: Promise<typeof import('@xterm/headless')> | null = null;
const loadEmulator = () => (emulatorModule ??= import('@xterm/headless').then((loaded) => loaded.default));

export class TerminalScreens {
  private readonly emulators = new BoundedCache<string, Emulator>(KEPT_TERMINALS);

  /** The screen of the run `runKey` whose terminal (`cols` by `rows`) wrote to `path`, once fed all that is there now. */
  async screenOf(runKey: string, path: string, cols: number, rows: number): Promise<Screen> {
    const { Terminal } = await loadEmulator();
    let emulator = this.emulators.get(runKey);
    if (emulator === undefined || fileSize(path) < emulator.fed) {
      emulator?.terminal.dispose();
      const terminal = new Terminal({ cols, rows, scrollback: 0, allowProposedApi: true });
      emulator = { terminal, fed: 0, feeding: Promise.resolve() };
      this.emulators.set(runKey, emulator);
    }
    const fed = emulator;
    fed.feeding = fed.feeding.then(() => feed(fed, path));
    await fed.feeding;
    return render(fed.terminal);
  }

  /** Forgets the screen of a run (its task was replaced or pruned). */
  forget(runKey: string): void {
    this.emulators.get(runKey)?.terminal.dispose();
    this.emulators.delete(runKey);
  }
}

async function feed(emulator: Emulator, path: string): Promise<void> {
  const size = fileSize(path);
  while (emulator.fed < size) {
    const bytes = readAt(path, emulator.fed, Math.min(FEED_BYTES, size - emulator.fed));
    if (bytes.length === 0) return;
    emulator.fed += bytes.length;
    // The emulator keeps a character split across writes for the next one.
    await new Promise<void>((resolve) => emulator.terminal.write(bytes, resolve));
  }
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
