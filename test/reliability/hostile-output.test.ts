// What a careless or hostile task prints cannot crash or stall the daemon, and grep finds what
// JavaScript's RegExp finds (issue 40, cases 1 to 4), each on a daemon of its own. The stall cases
// prove by order that /healthz keeps answering while the costly call is in flight (answers that
// came back before the call's own), and report the latencies measured, never assert them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { healthz, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test('a pty task moving its cursor a billion columns: its text is read, and read again after a restart on the same state dir', async (t) => {
  const first = await startTestDaemon(t);
  const tools = await connectClient(t, first.url);
  const command = 'printf "A\\033[1000000000CB\\n"; printf "\\033[2000000000GE\\n"';
  const run = await tools.ok('run', { command, pty: true, cols: 80, name: 'far', wait_seconds: 10 });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  const expected = `A${' '.repeat(78)}B\n${' '.repeat(79)}E\n`;
  const read = await tools.ok('output', { id: 'far' });
  assert.equal(read.stdout.text, expected, 'B and E land on the last of the 80 columns');
  assert.equal((await tools.ok('output', { id: 'far', tail: 1 })).stdout.text, expected.split('\n')[1] + '\n');
  assert.equal((await tools.ok('output', { id: 'far', grep: 'B$' })).stdout.text, `1:${expected.split('\n')[0]}\n`);
  assert.equal((await healthz(first.origin)).ok, true);

  assert.equal(await first.stop(), 0, 'the daemon stops cleanly');
  const second = await startTestDaemon(t, { stateDir: first.stateDir });
  const again = await connectClient(t, second.url);
  assert.equal((await again.ok('output', { id: 'far', tail: 1 })).stdout.text, expected.split('\n')[1] + '\n');
  assert.equal((await again.ok('output', { id: 'far' })).stdout.text, expected);
  assert.equal((await again.ok('status', { id: 'far' })).state, 'done');
  assert.equal((await healthz(second.origin)).ok, true);
  report(t, { case: 1, text_bytes: Buffer.byteLength(expected) });
});
