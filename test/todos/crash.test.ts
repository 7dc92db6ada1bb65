import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { answerOk, gate, OK, startDaemonWithPeer, startHarnessPeer } from '../helpers/harness-peer.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

test('a daemon SIGKILLed after a task ended and before the harness answered delivers that todo after restart', async (t) => {
  const never = gate();
  // The end of "victim" is received but never answered; everything else is acknowledged.
  const peer = await startHarnessPeer(t, async (request) => {
    if (request.key === 'victim' && request.state === 'done') await never.opened;
    return OK;
  });
  t.after(() => never.open());
  const first = await startTestDaemon(t, { args: ['--agent-socket', peer.path] });
  const tools = await connectClient(t, first.url);
  await tools.ok('run', { command: 'echo last words; exit 7', name: 'victim', wait_seconds: 0 });
  assert.ok(
    await waitFor(() => peer.requestsFor('victim').some((request) => request.state === 'done')),
    'the daemon sent the end before it died',
  );
  const sent = peer.requestsFor('victim').find((request) => request.state === 'done')!;
  await first.crash();
  await peer.stop(); // that harness goes away with the end unanswered

  // A harness that answers, not yet listening while the next daemon starts, so that what the daemon kept can be seen first.
  const harness = await startHarnessPeer(t, answerOk, false);
  const second = await startTestDaemon(t, {
    stateDir: first.stateDir,
    args: ['--agent-socket', harness.path],
    env: { HIVE_TEST_MARK: first.marker },
  });
  const todos = async () =>
    (
      (await fetch(`${second.origin}/healthz`).then((res) => res.json())) as {
        todos: { socket: string; harness_connected: boolean; outbox_depth: number };
      }
    ).todos;
  assert.deepEqual(
    await todos(),
    { socket: harness.path, harness_connected: false, outbox_depth: 1 },
    'the unacknowledged end survived the crash in the outbox',
  );
  await harness.start();
  const delivered = await harness.waitForTodo('victim', (request) => request.state === 'done');
  assert.deepEqual(delivered, sent, 'the same final state, as it was first sent');
  assert.ok(await waitFor(async () => (await todos()).outbox_depth === 0), 'the outbox drained');
  assert.deepEqual(
    harness.requestsFor('victim'),
    [sent],
    'the end was sent once to the new harness, and nothing else of it',
  );
});

test('a task running when the daemon dies gets an interrupted todo after restart, even one whose run was still waiting', async (t) => {
  const { peer, daemon: first, tools } = await startDaemonWithPeer(t);
  await tools.ok('run', { command: 'sleep 60', name: 'long', wait_seconds: 0 });
  await peer.waitForTodo('long', (request) => request.state === 'running');
  // Its todo shows it running from the moment run returns; its start (and so its runtime) comes a little later.
  assert.ok(
    await waitFor(async () => (await tools.call('status', { id: 'long' })).structured?.pid > 0),
    'the long task has started',
  );
  const waiting = tools
    .call('run', { command: 'sleep 60', name: 'waiting', wait_seconds: 30 })
    .catch((error: Error) => error);
  assert.ok(
    await waitFor(async () => (await tools.call('status', { id: 'waiting' })).structured?.pid > 0),
    'the waiting task has started',
  );
  // Todos go out in the order they were queued: once this one has arrived, one for "waiting" would have too.
  await tools.ok('run', { command: 'true', name: 'sentinel', wait_seconds: 0 });
  await peer.waitForTodo('sentinel', (request) => request.state === 'done');
  await first.crash();
  await waiting;
  assert.deepEqual(peer.requestsFor('waiting'), [], 'no todo while its run was waiting');

  await startTestDaemon(t, {
    stateDir: first.stateDir,
    args: ['--agent-socket', peer.path],
    env: { HIVE_TEST_MARK: first.marker },
  });
  for (const id of ['long', 'waiting']) {
    const todo = await peer.waitForTodo(id, (request) => request.state === 'interrupted');
    assert.match(
      todo.summary!,
      new RegExp(`^bash task ${id} interrupted: the daemon stopped while the task was running after \\d+\\.\\d s$`),
    );
    assert.match(todo.body!, /^error: the daemon stopped while the task was running$/m);
  }
});

test('a daemon stopped with SIGTERM hands the interrupted ends to the harness before it exits', async (t) => {
  const { peer, daemon, tools } = await startDaemonWithPeer(t, { args: ['--kill-grace-ms', '200'] });
  await tools.ok('run', { command: 'sleep 60', name: 'stopped', wait_seconds: 0 });
  await peer.waitForTodo('stopped', (request) => request.state === 'running');
  assert.equal(await daemon.stop(), 0);
  assert.equal(peer.todos.get('stopped')?.state, 'interrupted');
});
