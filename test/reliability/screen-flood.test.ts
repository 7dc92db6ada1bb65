// A pty task's flood of costly escape sequences gets a screen in bounded time: a task has a budget
// of screen work a minute, and past it a call draws a recent part of the output, saying what it
// skipped, instead of refusing call after call.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { healthzDuring, latencyFigures, servedMeanwhile } from '../helpers/stall.js';

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

/** Tasks whose screens are asked at once: each a 1000x1000 terminal of a flood, about 16 MB of heap when drawn. */
const AT_ONCE = 24;

test(`${AT_ONCE} screens of floods asked at once take turns: the daemon grows by a few terminals, not ${AT_ONCE}, and /healthz waits no longer than beside one`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const sequences = '\\033[1000000000S\\033[1000000000L';
  const command = `printf '${sequences}%.0s' $(seq 100000); printf '\\033[Hthe end'`;
  const flood = { command, pty: true, cols: 1000, rows: 1000, wait_seconds: 30 };
  for (let i = 0; i <= AT_ONCE; i++)
    assert.equal((await tools.ok('run', { ...flood, name: `flood-${i}` })).state, 'done');
  await tools.ok('run', { command: "printf 'small'", name: 'small', pty: true, wait_seconds: 30 });
  const screen = (id: string) => tools.call('output', { id, screen: true });
  const alone = await healthzDuring(daemon.origin, () => screen(`flood-${AT_ONCE}`));
  const before = processFigures(daemon.child.pid!).rssKb;
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, processFigures(daemon.child.pid!).rssKb)), 10);
  t.after(() => clearInterval(sampling));
  const together = await healthzDuring(daemon.origin, () =>
    Promise.all([...Array.from({ length: AT_ONCE }, (_, i) => screen(`flood-${i}`)), screen('small')]),
  );
  clearInterval(sampling);
  if ('error' in together.outcome) throw together.outcome.error;
  const answers = together.outcome.value;
  for (const answer of answers.slice(0, AT_ONCE))
    if (answer.isError) assert.equal(answer.structured.error.code, 'ERR_SCREEN_TOO_COSTLY', answer.text);
  assert.equal(
    answers.at(-1)!.structured.screen.text.split('\n')[0],
    'small',
    'a small screen asked among them is drawn',
  );
  const grownMb = (peak - before) / 1024;
  const aloneMs = latencyFigures(alone.answered);
  const togetherMs = latencyFigures(together.answered);
  report(t, {
    grown_mb: Math.round(grownMb),
    healthz_alone_ms: aloneMs,
    healthz_together_ms: togetherMs,
    call_ms: Math.round(together.callMs),
  });
  // Before the bound on the cells drawn at once, each call made a terminal of its own: 138 MB more.
  assert.ok(grownMb < 100, `${AT_ONCE} screens at once took ${Math.round(grownMb)} MB more`);
  // Each terminal ran its own loop from its own timer, all in one pass of the event loop: a median
  // of 131 ms against 26 ms beside one (max 385 against 129); in turns, 15 ms against 22 ms.
  assert.ok(
    togetherMs.median < 3 * aloneMs.median,
    `/healthz took ${togetherMs.median} ms (median) beside ${AT_ONCE} screens, ${aloneMs.median} ms beside one`,
  );
});
