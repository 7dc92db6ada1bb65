// A running task's output past the cap is flagged at once in the registry, not only with its end:
// a daemon killed while the task runs, then started again on the same state dir, still says the
// task's output was cut, and why. Before, the flag was written with the end, and a crash lost it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

const ARGS = ['--max-output-bytes', '1000'];

test("a running task's truncation outlives a crash of the daemon", async (t) => {
  const first = await startTestDaemon(t, { args: ARGS });
  const tools = await connectClient(t, first.url);
  await tools.ok('run', {
    command: "head -c 5000 /dev/zero | tr '\\0' x; echo; exec sleep 600",
    name: 'capped',
    wait_seconds: 0,
  });
  const status = () => tools.ok('status', { id: 'capped', peek: true, verbose: true });
  assert.ok(await waitFor(async () => (await status()).stdout_truncated === true, 30_000), 'the cap is reached');
  const before = await status();
  assert.equal(before.state, 'running');

  await first.crash();
  const second = await startTestDaemon(t, {
    stateDir: first.stateDir,
    args: ARGS,
    env: { HIVE_TEST_MARK: first.marker },
  });
  const again = await connectClient(t, second.url);
  const after = await again.ok('status', { id: 'capped', peek: true, verbose: true });
  assert.equal(after.state, 'interrupted');
  assert.deepEqual(
    [after.stdout_truncated, after.stdout_truncated_reason],
    [true, before.stdout_truncated_reason],
    'the flag and its reason, as before the crash',
  );
});
