// Millions of empty lines: what an answer shows is held as lines, and max_bytes of empty lines is a
// million of them, so each end of what is shown holds 50,000 lines at most (MAX_LINES_A_SIDE).
// Before, one `output` with max_bytes 900,000 took the daemon from 139 to 558 MB, and one with
// 1 MiB answered ERR_INTERNAL: Maximum call stack size exceeded (its lines spread into a push).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const LINES = 8_000_000;
const CALLS = 2;
const A_SIDE = 50_000;

test(`${CALLS} outputs of ${LINES} empty lines within max_bytes hold ${A_SIDE} lines a side`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const run = await tools.ok('run', {
    command: String.raw`head -c ${LINES} /dev/zero | tr '\0' '\n'`,
    name: 'blank',
    wait_seconds: 30,
  });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  const outputs = (maxBytes: number) =>
    Promise.all(
      Array.from({ length: CALLS }, () => tools.ok('output', { id: 'blank', stream: 'stdout', max_bytes: maxBytes })),
    );
  // Both reader threads started, and the file in the page cache, before the baseline.
  await outputs(1024);
  const before = processFigures(daemon.child.pid!).rssKb;
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, processFigures(daemon.child.pid!).rssKb)), 10);
  t.after(() => clearInterval(sampling));
  const answers = await outputs(900_000);
  clearInterval(sampling);
  const grownMb = (peak - before) / 1024;
  report(t, { before_mb: Math.round(before / 1024), peak_mb: Math.round(peak / 1024), grown_mb: Math.round(grownMb) });
  for (const { stdout } of answers) {
    assert.deepEqual([stdout.first_line, stdout.last_line], [1, LINES]);
    assert.equal(stdout.omitted_lines, LINES - 2 * A_SIDE);
    assert.equal(stdout.text.split('\n').length - 1, 2 * A_SIDE + 1, 'both ends and the note of what was left out');
  }
  // Before: 139 to 558 MB for one such call (by hand).
  assert.ok(grownMb < 100, `${CALLS} outputs took the daemon ${Math.round(grownMb)} MB further`);

  const whole = await tools.ok('output', { id: 'blank', stream: 'stdout', max_bytes: 1024 * 1024 });
  assert.equal(whole.stdout.omitted_lines, LINES - 2 * A_SIDE, 'a megabyte of lines is answered, not a stack overflow');
});
