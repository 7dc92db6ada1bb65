// A timeout past what one Node timer holds (2^31 - 1 ms, 24.8 days) waits in steps: before, a run
// with timeout_seconds 3,000,000, or any task under --default-timeout 3000000, was ended as
// timed_out a few milliseconds after it started.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test('a timeout of a month or a year lets the task run: from the run, and from --default-timeout', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--default-timeout', '3000000'] });
  const tools = await connectClient(t, daemon.url);
  for (const timeout of [2_147_484, 31_536_000, undefined]) {
    const run = await tools.ok('run', {
      command: 'sleep 0.5; echo ok',
      ...(timeout === undefined ? {} : { timeout_seconds: timeout }),
      wait_seconds: 30,
    });
    assert.deepEqual(
      [run.state, run.exit_code, run.stdout_tail],
      ['done', 0, 'ok\n'],
      `timeout ${timeout ?? 'default'}`,
    );
  }
});
