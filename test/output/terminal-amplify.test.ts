// A pty task's clean text can be far longer than its bytes: a 9-byte line that moves the cursor
// 999 columns is a line of 1,000 characters on a 1000-column terminal. Each line is cleaned as it is
// read, not a whole chunk at once: before, one `output` of such a 1.8 MB file took the daemon from
// 105 to 549 MB (10.8 MB: to 1.71 GB), and told 200,183,984 bytes left out of it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const LINES = 200_000;

test(`an output of ${LINES} lines that each move the cursor 999 columns holds a line at a time`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const command = String.raw`for i in $(seq ${LINES / 1000}); do printf '\033[999Cx\n%.0s' $(seq 1000); done`;
  const run = await tools.ok('run', { command, name: 'wide', pty: true, cols: 1000, rows: 24, wait_seconds: 30 });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  await tools.ok('output', { id: 'wide', max_bytes: 100 }); // the reader threads started
  const before = processFigures(daemon.child.pid!).rssKb;
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, processFigures(daemon.child.pid!).rssKb)), 10);
  t.after(() => clearInterval(sampling));
  const { stdout } = await tools.ok('output', { id: 'wide' });
  clearInterval(sampling);
  const grownMb = Math.round((peak - before) / 1024);
  report(t, { file_bytes: stdout.bytes, grown_mb: grownMb, omitted_bytes: stdout.omitted_bytes });
  assert.equal(stdout.last_line, LINES);
  assert.equal(stdout.text.split('\n').at(-2), `${' '.repeat(999)}x`);
  assert.ok(stdout.omitted_bytes < stdout.bytes, `${stdout.omitted_bytes} bytes left out of ${stdout.bytes}`);
  // By hand, before: about 270 MB further for a file of this size.
  assert.ok(grownMb < 100, `one output took the daemon ${grownMb} MB further`);
});

test('a letter followed by 200,000 combining marks: the screen shows it with its first 30', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const command = String.raw`python3 -c "import sys; sys.stdout.write('a' + '\u0301' * 200000 + '\nb')"`;
  await tools.ok('run', { command, name: 'marks', pty: true, cols: 80, rows: 5, wait_seconds: 30 });
  let screen: any = null;
  while (screen === null) {
    const answer = await tools.call('output', { id: 'marks', screen: true });
    if (!answer.isError) screen = answer.structured.screen;
    else assert.equal(answer.structured.error.code, 'ERR_SCREEN_TOO_COSTLY', answer.text);
  }
  const rows = screen.text.split('\n');
  // Before, the first row held all 200,000 marks (a screen answer of 400 KB and more).
  assert.equal(rows[0], `a${'\u0301'.repeat(30)}`);
  assert.equal(rows[1], 'b');
});
