import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

const GRACE_MS = 1000;

test('kill ends a running task and every process in its group', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--kill-grace-ms', String(GRACE_MS)] });
  const tools = await connectClient(t, daemon.url);
  const env = { VICTIM: daemon.marker };
  const task = await tools.ok('run', {
    command: 'sleep 60 | cat & (sleep 60; true) & sleep 60',
    env,
    wait_seconds: 0.3,
  });
  assert.ok(
    await waitFor(() => findMarkedProcesses(`VICTIM=${daemon.marker}`).length >= 4, 5000),
    'every process of the group has started',
  );
  const killed = await tools.ok('kill', { id: task.id });
  assert.equal(killed.signal, 'SIGINT');
  assert.equal(killed.state, 'running', 'kill returns without waiting');
  const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
  assert.equal(ended.state, 'killed');
  // The leader waits on its last sleep, which SIGINT ends, and then ends itself with SIGINT, as bash does.
  assert.equal(ended.signal, 'SIGINT');
  assert.equal(ended.exit_code, 130);
  assert.ok(
    await waitFor(() => findMarkedProcesses(`VICTIM=${daemon.marker}`).length === 0, GRACE_MS + 5000),
    'nothing is left',
  );
});

test('kill escalates to SIGKILL when the first signal is ignored', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--kill-grace-ms', String(GRACE_MS)] });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', {
    command: "trap '' INT TERM; echo ready; while :; do sleep 0.05; done",
    wait_for: '^ready$',
    wait_seconds: 30,
  });
  assert.equal(task.stdout_tail, 'ready\n');
  const sent = Date.now();
  await tools.ok('kill', { id: task.id, signal: 'SIGTERM' });
  const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
  const took = Date.now() - sent;
  assert.equal(ended.state, 'killed');
  assert.equal(ended.signal, 'SIGKILL');
  assert.equal(ended.exit_code, 137);
  assert.ok(took >= GRACE_MS - 50, `SIGKILL came after the grace period (${took} ms)`);
});

test('force kills at once with SIGKILL', async (t) => {
  const daemon = await startTestDaemon(t); // default grace: 5 s
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: "trap '' INT; sleep 60", wait_seconds: 0.2 });
  const sent = Date.now();
  const killed = await tools.ok('kill', { id: task.id, force: true });
  assert.equal(killed.signal, 'SIGKILL');
  const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
  assert.equal(ended.state, 'killed');
  assert.equal(ended.signal, 'SIGKILL');
  assert.ok(Date.now() - sent < 4000);
});

test('a killed task that exits 0 on the signal is still reported killed', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', {
    command: "trap 'exit 0' INT; echo ready; while :; do sleep 0.05; done",
    wait_for: '^ready$', // its trap is set before the signal comes
    wait_seconds: 30,
  });
  await tools.ok('kill', { id: task.id });
  const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
  assert.equal(ended.state, 'killed');
  assert.equal(ended.exit_code, 0);
});

test('a pending task killed before it starts ends as killed and never runs', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-running', '1'] });
  const tools = await connectClient(t, daemon.url);
  const blocker = await tools.ok('run', { command: 'sleep 60', wait_seconds: 0 });
  const waiting = await tools.ok('run', {
    command: 'echo ran > "$HIVE_BASH_TASK_ID.flag"',
    cwd: daemon.scratch,
    wait_seconds: 0,
  });
  assert.equal(waiting.state, 'pending');
  assert.equal(waiting.pid, null);
  const killed = await tools.ok('kill', { id: waiting.id });
  assert.equal(killed.state, 'killed');
  assert.equal('signal' in killed, false, 'nothing was signalled: the result leaves signal out');
  assert.equal(killed.message, `task ${waiting.id} was cancelled before it started`);
  await tools.ok('kill', { id: blocker.id, force: true });
  await tools.ok('status', { id: blocker.id, wait_seconds: 10 });
  const after = await tools.ok('status', { id: waiting.id });
  assert.equal(after.state, 'killed');
  assert.equal(after.started_at, null);
  assert.equal(after.exit_code, null);
  const { existsSync } = await import('node:fs');
  assert.equal(existsSync(`${daemon.scratch}/${waiting.id}.flag`), false);
});

test('timeout_seconds ends the task as timed_out with SIGTERM, then SIGKILL if needed', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--kill-grace-ms', String(GRACE_MS)] });
  const tools = await connectClient(t, daemon.url);
  const polite = await tools.ok('run', { command: 'sleep 60', timeout_seconds: 0.5, wait_seconds: 10 });
  assert.equal(polite.state, 'timed_out');
  assert.equal(polite.signal, 'SIGTERM');
  assert.equal(polite.exit_code, 143);
  assert.ok(polite.runtime_ms >= 450 && polite.runtime_ms < 3000, `runtime ${polite.runtime_ms}`);
  const stubborn = await tools.ok('run', {
    command: "trap '' TERM; while :; do sleep 0.05; done",
    timeout_seconds: 0.3,
    wait_seconds: 10,
  });
  assert.equal(stubborn.state, 'timed_out');
  assert.equal(stubborn.signal, 'SIGKILL');
  assert.ok(stubborn.runtime_ms >= 300 + GRACE_MS - 50, `runtime ${stubborn.runtime_ms}`);
});

test('--default-timeout applies to tasks that set none', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--default-timeout', '0.4'] });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'sleep 60', wait_seconds: 10 });
  assert.equal(task.state, 'timed_out');
  const own = await tools.ok('run', { command: 'sleep 1; echo ok', timeout_seconds: 5, wait_seconds: 10 });
  assert.equal(own.state, 'done');
});
