// A pty task's line of tabs, each eight columns of clean text: a line is built as an array of its
// columns, so it is kept to MAX_CLEAN_COLUMNS (output shows 1 MiB of a line at most). Before, 60 MB
// of "\tx" in one line, 270 million columns, took four output calls to 1.6 GB.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_CLEAN_COLUMNS } from '../../src/supervisor/output/terminal-text.js';
import { processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const PAIRS = 5_000_000;

test(`a pty line of ${PAIRS} tabs and x's is cleaned to ${MAX_CLEAN_COLUMNS} columns, and costs the daemon little`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const command = `python3 -c "import sys; sys.stdout.write('\\\\tx' * ${PAIRS})"`;
  const run = await tools.ok('run', { command, name: 'tabs', pty: true, cols: 1000, wait_seconds: 30 });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  const before = processFigures(daemon.child.pid!).rssKb;
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, processFigures(daemon.child.pid!).rssKb)), 10);
  t.after(() => clearInterval(sampling));
  const shown = await tools.ok('output', { id: 'tabs', tail: 2, max_bytes: 1024 * 1024 });
  clearInterval(sampling);
  const grownMb = (peak - before) / 1024;
  report(t, { written_bytes: run.stdout_bytes, grown_mb: Math.round(grownMb) });
  // Row after row of a 1000-column terminal: a tab stops at its last column, where an x then wraps.
  assert.match(shown.stdout.text, /^ {8}x {7}x/);
  // The line's last 1 MiB, after the note of what was left out.
  assert.ok(shown.stdout.text.length <= MAX_CLEAN_COLUMNS + 100, `${shown.stdout.text.length} characters shown`);
  // 40 million columns of one-character strings: 320 MB of array before, whatever the rest.
  assert.ok(grownMb < 150, `the call took the daemon ${Math.round(grownMb)} MB further`);
});
