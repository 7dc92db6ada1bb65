// A pty task's flood of costly escape sequences gets a screen in bounded time: a task has a budget
// of screen work a minute, and past it a call draws a recent part of the output, saying what it
// skipped, instead of refusing call after call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { servedMeanwhile } from '../helpers/stall.js';

/** Calls that may be refused before one answers: 6 s of screen work a minute, 2 s a call. */
const REFUSED_AT_MOST = 3;

test('a dense feed of CSIs with counts of a billion on a 1000x1000 terminal: screen answers by the fourth call, a recent part drawn and what was skipped said', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  // 100,000 scrolls and line insertions of a billion lines each, each a pass over a million cells.
  const sequences = '\\033[1000000000S\\033[1000000000L';
  const command = `printf '${sequences}%.0s' $(seq 100000); printf '\\033[Hthe end'`;
  const run = await tools.ok('run', { command, name: 'flood', pty: true, cols: 1000, rows: 1000, wait_seconds: 30 });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  const written = run.stdout_bytes as number;
  const calls: Array<Record<string, unknown>> = [];
  let screen: any = null;
  // Bounded: the fourth call at the latest answers, else the test fails (on a build without the
  // budget, each call is refused for as long as the feed takes: minutes).
  while (screen === null && calls.length <= REFUSED_AT_MOST) {
    const { value, figures } = await servedMeanwhile(daemon.origin, 'screen', () =>
      tools.call('output', { id: 'flood', screen: true }),
    );
    calls.push(figures);
    if (!value.isError) screen = value.structured.screen;
    else assert.equal(value.structured.error.code, 'ERR_SCREEN_TOO_COSTLY', value.text);
  }
  assert.ok(screen !== null, `screen was refused ${calls.length} times in a row`);
  assert.equal(screen.text.split('\n')[0], 'the end', 'the end of the output is drawn');
  assert.ok(
    screen.skipped_bytes > 0 && screen.skipped_bytes < written,
    `skipped ${screen.skipped_bytes} of ${written} bytes`,
  );
  report(t, { written_bytes: written, skipped_bytes: screen.skipped_bytes, calls });
});
