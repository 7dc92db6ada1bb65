// A pattern V8 hands to its linear engine (it backtracks too much) costs about 220 bytes for each
// character of the text it searches: grep searches a window of whole lines at a time, 64 Ki
// characters and the rest of the line it ends in, not a read's whole 4 MiB. Before, one grep of
// (a+)+$ over 20 MB of `a` lines took the daemon to 1.04 GB.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const LINES = 2000;

test(`a grep that backtracks too much over ${LINES} lines of 2,001 bytes takes the daemon less than 100 MB further`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const command = `awk 'BEGIN { line = sprintf("%2000s", ""); gsub(/ /, "a", line); for (i = 0; i < ${LINES}; i++) print line "b" }'`;
  await tools.ok('run', { command, name: 'aaa', wait_seconds: 30 });
  await tools.ok('output', { id: 'aaa', grep: 'b$', head: 1 }); // the reader threads started
  const before = processFigures(daemon.child.pid!).rssKb;
  let peak = before;
  const sampling = setInterval(() => (peak = Math.max(peak, processFigures(daemon.child.pid!).rssKb)), 10);
  t.after(() => clearInterval(sampling));
  const { stdout } = await tools.ok('output', { id: 'aaa', grep: '(a+)+$' });
  clearInterval(sampling);
  const grownMb = Math.round((peak - before) / 1024);
  report(t, { bytes: stdout.bytes, grown_mb: grownMb });
  assert.equal(stdout.matches, 0, 'no line ends in an a');
  // By hand, before: about 900 MB further for a read of 4 MiB.
  assert.ok(grownMb < 100, `one grep took the daemon ${grownMb} MB further`);
});
