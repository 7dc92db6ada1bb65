// top: a live view of the running tasks, refreshed every second on a terminal, q to quit; --once prints one frame.
import { parseChoice } from '../arguments.js';
import { writeJson, type Command, type CommandContext } from '../command.js';
import { collectFrame, renderFrame, type CpuSamples, type SortKey } from './top-frame.js';

const REFRESH_MS = 1000;
const SORT_KEYS: readonly SortKey[] = ['cpu', 'memory'];
const ENTER_SCREEN = '\x1b[?1049h\x1b[?25l';
const LEAVE_SCREEN = '\x1b[?25h\x1b[?1049l';
const CLEAR = '\x1b[H\x1b[2J';
const QUIT_KEYS = new Set(['q', 'Q', '\x03', '\x04']);

/** Resolves when a quit key is pressed; the terminal is in raw mode until `restore`. */
function watchKeys(): { quit: Promise<void>; restore(): void } {
  const stdin = process.stdin;
  let onData: (data: Buffer) => void = () => {};
  const quit = new Promise<void>((resolve) => {
    onData = (data) => {
      if ([...data.toString('utf8')].some((key) => QUIT_KEYS.has(key))) resolve();
    };
  });
  stdin.setRawMode(true);
  stdin.on('data', onData).resume();
  return {
    quit,
    restore() {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
    },
  };
}

/** Redraws every second until q; the screen is restored whatever happens. */
async function showLive(context: CommandContext, sort: SortKey): Promise<void> {
  const samples: CpuSamples = new Map();
  const keys = watchKeys();
  let quitting = false;
  void keys.quit.then(() => (quitting = true));
  context.write(ENTER_SCREEN);
  try {
    while (!quitting) {
      const frame = await collectFrame(context.client, sort, samples);
      if (quitting) break;
      const text = renderFrame(
        frame,
        context.client.url.href,
        sort,
        context.paint,
        process.stdout.columns ?? 80,
        process.stdout.rows ?? 24,
      );
      context.write(`${CLEAR}${text.replace(/\n/g, '\r\n')}press q to quit`);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([keys.quit, new Promise((resolve) => (timer = setTimeout(resolve, REFRESH_MS)))]);
      clearTimeout(timer);
    }
  } finally {
    keys.restore();
    context.write(LEAVE_SCREEN);
  }
}

export const topCommand: Command = {
  name: 'top',
  summary: 'a live view of the running tasks, by CPU or memory, the totals on top',
  usage: 'hive-bash top [--sort cpu|memory] [--once]',
  help: [
    '--sort KEY      cpu (default) or memory',
    '--once          print one frame and exit (also when stdout or stdin is not a terminal)',
    'On a terminal it redraws every second; q (or Ctrl-C) quits. %CPU is since the last frame',
    "(in a single frame: over the task's runtime, as ps shows it); - where the daemon has no figure.",
  ],
  options: { sort: { type: 'string' }, once: { type: 'boolean' } },
  async run(context, values) {
    const sort = parseChoice('--sort', values.sort as string | undefined, SORT_KEYS) ?? 'cpu';
    if (context.json) {
      writeJson(context, await collectFrame(context.client, sort, null));
      return 0;
    }
    if (values.once || !context.terminal) {
      const frame = await collectFrame(context.client, sort, null);
      context.write(renderFrame(frame, context.client.url.href, sort, context.paint, context.width, null));
      return 0;
    }
    await showLive(context, sort);
    return 0;
  },
};
