// Four tails of 100,000 lines at once, of an output of random bytes: a tail keeps the texts of its
// last max_bytes only, the places in the file of the rest, and reads again the lines its front
// shows. Before, every line of the window was held until the end of the read: four such calls took
// the daemon from 182 to 477 MB (the bar is 300).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const BYTES = 60_000_000;
const TAIL = 100_000;
const CALLS = 4;

test(`${CALLS} tails of ${TAIL} lines of ${BYTES} random bytes at once cost the daemon little`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const run = await tools.ok('run', { command: `head -c ${BYTES} /dev/urandom`, name: 'noise', wait_seconds: 30 });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  const tails = (tail: number) =>
    Promise.all(Array.from({ length: CALLS }, () => tools.ok('output', { id: 'noise', stream: 'stdout', tail })));
  // Both reader threads started, and the file in the page cache, before the baseline.
  const few = await tails(10);
  const before = processFigures(daemon.child.pid!).rssKb;
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, processFigures(daemon.child.pid!).rssKb)), 10);
  t.after(() => clearInterval(sampling));
  const answers = await tails(TAIL);
  clearInterval(sampling);
  const grownMb = (peak - before) / 1024;
  report(t, { before_mb: Math.round(before / 1024), peak_mb: Math.round(peak / 1024), grown_mb: Math.round(grownMb) });
  const last = few[0].stdout.last_line as number;
  // What the front shows was read again from the file: the window's first lines as written.
  const lines = readFileSync(join(daemon.stateDir, 'harness', 'bash-tasks', 'noise.out'))
    .toString('utf8')
    .split('\n')
    .map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  for (const answer of answers) {
    const shown = answer.stdout;
    assert.deepEqual([shown.first_line, shown.last_line], [last - TAIL + 1, last]);
    assert.ok(shown.omitted_lines > 0);
    const front = shown.text.slice(0, shown.text.indexOf('[... '));
    const whole = front.slice(0, front.lastIndexOf('\n') + 1);
    assert.ok(whole.length > 0, 'the front shows whole lines');
    assert.ok(
      lines
        .slice(last - TAIL)
        .join('\n')
        .startsWith(whole),
      "the front is the window's first lines",
    );
  }
  // Before: +296 and +278 MB (182 to 477). After: +51 and +52 MB.
  assert.ok(grownMb < 150, `${CALLS} tails took the daemon ${Math.round(grownMb)} MB further`);
});
