import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

test('after a crash the next start kills what the tasks left and marks them interrupted', async (t) => {
  // Without the tasks' own namespace, whose init would take the lingering processes with it at the crash
  // (test/reliability/task-reach.test.ts): here they wait for the next start.
  const first = await startTestDaemon(t, { args: ['--max-running', '1', '--task-namespace', 'off'] });
  const tools = await connectClient(t, first.url);
  const marker = `ORPHAN=${first.marker}`;
  const running = await tools.ok('run', {
    command: 'sleep 120 & sleep 120',
    name: 'long',
    env: { ORPHAN: first.marker },
    wait_seconds: 0.3,
  });
  const pending = await tools.ok('run', { command: 'echo never', name: 'queued', wait_seconds: 0 });
  assert.equal(running.state, 'running');
  assert.equal(pending.state, 'pending');
  // run's wait can end before the task started on a loaded machine: bash and both sleeps first.
  assert.ok(
    await waitFor(() => findMarkedProcesses(marker).length === 3, 15_000),
    `started: ${findMarkedProcesses(marker).length} of bash and its two sleeps`,
  );
  await first.crash();
  if (first.containment === 'node') {
    assert.equal(findMarkedProcesses(marker).length, 3, 'bash and its two sleeps outlive a daemon killed with SIGKILL');
  } else {
    // The leader dies with the daemon (PR_SET_PDEATHSIG on the shim and on bash); its jobs wait for the next start.
    assert.ok(
      await waitFor(() => findMarkedProcesses(marker).length === 2, 5000),
      `left: ${findMarkedProcesses(marker).length}`,
    );
  }

  const second = await startTestDaemon(t, {
    stateDir: first.stateDir,
    args: ['--task-namespace', 'off'],
    env: { HIVE_TEST_MARK: first.marker },
  });
  assert.ok(
    await waitFor(() => findMarkedProcesses(marker).length === 0, 5000),
    'the lingering processes were killed at start',
  );
  const again = await connectClient(t, second.url);
  const long = await again.ok('status', { id: 'long' });
  assert.equal(long.state, 'interrupted');
  assert.equal(long.error, 'the daemon stopped while the task was running');
  assert.ok(Number.isFinite(Date.parse(long.ended_at)), `ended_at ${long.ended_at} is a time`);
  const queued = await again.ok('status', { id: 'queued' });
  assert.equal(queued.state, 'interrupted');
  assert.equal(queued.error, 'the daemon stopped before the task started');
  const fresh = await again.ok('run', { command: 'echo fresh', name: 'long' });
  assert.equal(fresh.stdout_tail, 'fresh\n', 'an interrupted name is free again');
});

test('SIGTERM stops the daemon cleanly: running tasks are ended and marked interrupted', async (t) => {
  const first = await startTestDaemon(t, { args: ['--kill-grace-ms', '500'] });
  const tools = await connectClient(t, first.url);
  const marker = `STOPPED=${first.marker}`;
  await tools.ok('run', {
    command: "trap '' INT TERM; echo ready; sleep 120 & while :; do sleep 0.1; done",
    name: 'stubborn',
    env: { STOPPED: first.marker },
    wait_for: '^ready$', // its trap is set: a SIGTERM cannot end it
    wait_seconds: 30,
  });
  await tools.ok('run', { command: 'true', name: 'quick' });
  const code = await first.stop();
  assert.equal(code, 0);
  assert.equal(findMarkedProcesses(marker).length, 0, 'nothing of the task outlives a clean stop');
  const second = await startTestDaemon(t, { stateDir: first.stateDir, env: { HIVE_TEST_MARK: first.marker } });
  const again = await connectClient(t, second.url);
  const stubborn = await again.ok('status', { id: 'stubborn' });
  // It ignored SIGTERM: what ended it was the SIGKILL after the grace period.
  assert.deepEqual([stubborn.state, stubborn.signal, stubborn.exit_code], ['interrupted', 'SIGKILL', 137]);
  assert.equal((await again.ok('status', { id: 'quick' })).state, 'done');
  assert.doesNotMatch(second.stderr(), /marked tasks left by the last daemon/);
});

test('a second daemon on the same state directory is refused', async (t) => {
  const first = await startTestDaemon(t);
  const { runDaemonBinary } = await import('../helpers/daemon.js');
  const second = await runDaemonBinary(['--port', '0', '--state-dir', first.stateDir]);
  assert.equal(second.code, 2);
  assert.match(
    second.stderr,
    new RegExp(`another hive-bash-daemon \\(pid ${first.child.pid}\\) uses the state directory`),
  );
});
