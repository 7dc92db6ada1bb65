import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { gate, OK, startDaemonWithPeer } from '../helpers/harness-peer.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

interface TodoHealth {
  socket: string | null;
  harness_connected: boolean;
  outbox_depth: number;
}

async function todoHealth(daemon: TestDaemon): Promise<TodoHealth> {
  const health = (await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as { todos: TodoHealth };
  return health.todos;
}

/** The daemon's log lines (JSON on stderr) with message `msg`. */
function logsSaying(daemon: TestDaemon, msg: string): Array<Record<string, unknown>> {
  return daemon
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.msg === msg);
}

const FINISHED = new Set(['done', 'timed_out', 'killed', 'interrupted']);

test('200 tasks that end while the harness is down are each delivered once, in their final state, when it is back', async (t) => {
  const { peer, daemon, tools } = await startDaemonWithPeer(t, {
    peerDown: true,
    args: ['--max-running', '16', '--kill-grace-ms', '200'],
  });
  const kind = (i: number) => (i % 10 === 0 ? 'killed' : i % 10 === 1 ? 'timed_out' : 'done');
  const started = await Promise.all(
    Array.from({ length: 200 }, (_, i) => {
      const args = kind(i) === 'done' ? { command: `echo "task ${i}"; exit $((${i} % 5))` } : { command: 'sleep 30' };
      return tools.ok('run', {
        ...args,
        name: `down-${i}`,
        wait_seconds: 0,
        ...(kind(i) === 'timed_out' ? { timeout_seconds: 0.2 } : {}),
      });
    }),
  );
  assert.equal(started.length, 200);
  await Promise.all(started.filter((_, i) => kind(i) === 'killed').map((task) => tools.ok('kill', { id: task.id })));
  const finished = await waitFor(async () => {
    const { tasks } = await tools.ok('list', { limit: 1000 });
    return tasks.every((task: { state: string }) => FINISHED.has(task.state)) ? tasks : null;
  }, 30_000);
  assert.ok(finished, 'all 200 tasks finished');
  const down = await todoHealth(daemon);
  assert.equal(down.harness_connected, false);
  assert.equal(down.outbox_depth, 200, 'one coalesced operation per task waits in the outbox');

  await peer.start();
  assert.ok(await waitFor(() => peer.todos.size === 200, 30_000), `delivered ${peer.todos.size} of 200 todos`);
  for (const [i, task] of (finished as Array<{ id: string; state: string; exit_code: number | null }>).entries()) {
    assert.equal(task.state, kind(Number(task.id.slice('down-'.length))), `${task.id} ended as it should (${i})`);
    const todo = peer.todos.get(task.id)!;
    assert.equal(todo.state, task.state, task.id);
    assert.match(todo.summary!, new RegExp(`^bash task ${task.id} ${task.state}: `));
    if (task.state === 'done') assert.match(todo.summary!, new RegExp(`: exit ${task.exit_code} after`));
    assert.equal(
      peer.requestsFor(task.id).length,
      1,
      `${task.id} was sent once: what was queued while down was coalesced`,
    );
  }
  assert.ok(await waitFor(async () => (await todoHealth(daemon)).outbox_depth === 0));
  assert.equal((await todoHealth(daemon)).harness_connected, true);
});

test('requests a harness took down with it unanswered are sent again when it is back', async (t) => {
  const held = gate();
  t.after(() => held.open());
  const { peer, daemon, tools } = await startDaemonWithPeer(t, { answer: async () => (await held.opened, OK) });
  await tools.ok('run', { command: 'exit 2', name: 'unanswered', wait_seconds: 0 });
  assert.ok(await waitFor(() => peer.requestsFor('unanswered').some((request) => request.state === 'done')));
  await peer.stop();
  peer.answer = () => OK;
  await peer.start();
  const todo = await peer.waitForTodo('unanswered', (request) => request.state === 'done');
  assert.match(todo.summary!, /^bash task unanswered done: exit 2 after/);
  const ends = peer.requestsFor('unanswered').filter((request) => request.state === 'done');
  assert.equal(ends.length, 2, 'sent once before the harness went down and once after');
  assert.deepEqual(ends[1], ends[0], 'the same operation, not a new state');
  assert.ok(await waitFor(async () => (await todoHealth(daemon)).outbox_depth === 0));
});

test('a todo the harness refuses with ok:false is sent again later, and the refusal is logged', async (t) => {
  let refusals = 0;
  const { peer, daemon, tools } = await startDaemonWithPeer(t, {
    answer: () =>
      ++refusals <= 2
        ? '{"ok":false,"error":"the board is busy"}'
        : refusals === 3
          ? JSON.stringify({ ok: false, error: 'x'.repeat(1024 * 1024 - 100) })
          : OK,
  });
  await tools.ok('run', { command: 'exit 4', name: 'refused', wait_seconds: 0 });
  const todo = await peer.waitForTodo('refused', (request) => request.state === 'done');
  assert.match(todo.summary!, /exit 4/);
  assert.ok(peer.requestsFor('refused').length >= 2, 'the refused operation came again');
  const refusalsLogged = logsSaying(daemon, 'the harness refused a todo; it will be sent again');
  assert.ok(refusalsLogged.length >= 1);
  assert.deepEqual(
    { key: refusalsLogged[0]!.key, error: refusalsLogged[0]!.error },
    { key: 'refused', error: 'the board is busy' },
  );
  // A hostile harness's error of 1 MiB made each retry log a line of 1 MiB (43 MB in 30 s).
  const long = await waitFor(() => logsSaying(daemon, 'the harness refused a todo; it will be sent again')[2], 30_000);
  assert.ok(long, 'the third refusal is logged');
  assert.equal(long.error, `${'x'.repeat(200)}... (${1024 * 1024 - 100} characters)`);
  assert.ok(await waitFor(async () => (await todoHealth(daemon)).outbox_depth === 0));
});

test('a harness that answers slowly does not slow run or status', async (t) => {
  const held = gate();
  let answered = 0;
  const answer = async () => {
    await held.opened;
    await new Promise((resolve) => setTimeout(resolve, 20));
    answered++;
    return OK;
  };
  const { peer, daemon, tools } = await startDaemonWithPeer(t, { answer });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push((await tools.ok('run', { command: 'true', name: `slow-${i}`, wait_seconds: 0 })).id);
  assert.ok(await waitFor(() => peer.received.length >= 5), 'the harness has requests it does not answer');
  for (let round = 0; round < 4; round++) {
    for (const id of ids) assert.equal((await tools.ok('status', { id, wait_seconds: 5 })).state, 'done');
  }
  assert.equal(answered, 0, 'every status call returned while the harness held all its answers');
  held.open();
  assert.ok(await waitFor(async () => (await todoHealth(daemon)).outbox_depth === 0, 15_000));
  for (const id of ids) {
    assert.equal(peer.todos.has(id), false, `${id}: status handed the result over, so its todo ends cleared`);
    assert.equal(peer.requestsFor(id).at(-1)?.cmd, 'todo_clear', `${id}: the todo it had was cleared`);
  }
});

test('malformed answer lines from the harness are logged and survived', async (t) => {
  const bad = ['this is not json', '{"ok":"yes"}', '', '[1,2]'];
  let count = 0;
  const { peer, daemon, tools } = await startDaemonWithPeer(t, { answer: () => bad[count++] ?? OK });
  await tools.ok('run', { command: 'echo survived', name: 'garbled', wait_seconds: 0 });
  const todo = await peer.waitForTodo('garbled', (request) => request.state === 'done');
  assert.match(todo.body!, /^survived$/m);
  const errors = logsSaying(daemon, 'malformed answer from the harness; the todo will be sent again').map(
    (entry) => entry.error,
  );
  const expected = (line: string) =>
    `malformed answer (expected {"ok":true} or {"ok":false,"error":"..."}): ${JSON.stringify(line)}`;
  assert.deepEqual(errors.slice(0, 4), [
    `malformed answer (not JSON): "this is not json"`,
    expected('{"ok":"yes"}'),
    `malformed answer (not JSON): ""`,
    expected('[1,2]'),
  ]);
  assert.equal((await tools.ok('run', { command: 'echo still serving' })).stdout_tail, 'still serving\n');
  assert.ok(await waitFor(async () => (await todoHealth(daemon)).outbox_depth === 0));
});

test('without a socket the daemon runs as before and keeps its todos in the outbox', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  assert.equal((await tools.ok('run', { command: 'echo inline' })).state, 'done');
  await tools.ok('run', { command: 'true', name: 'kept', wait_seconds: 0 });
  assert.ok(await waitFor(async () => (await tools.ok('list', { state: 'done' })).tasks.length === 2));
  assert.deepEqual(await todoHealth(daemon), { socket: null, harness_connected: false, outbox_depth: 1 });
});
