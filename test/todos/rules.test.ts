import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { deliverSentinel, startDaemonWithPeer } from '../helpers/harness-peer.js';
import { request } from 'undici';
import { modernRequest } from '../helpers/modern-client.js';
import { openSession } from '../helpers/session-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

test('a task that outlives run is upserted as running, then with its end; status clears it once', async (t) => {
  const { peer, daemon, tools } = await startDaemonWithPeer(t);
  const go = join(daemon.scratch, 'go');
  const command = `echo started; while [ ! -e ${go} ]; do sleep 0.02; done; echo finished; echo oops >&2; exit 3`;
  // Returns once the task has started and written (never on a time: a slow start would upsert twice).
  const run = await tools.ok('run', { command, name: 'build-1', wait_for: '^started$', wait_seconds: 30 });
  assert.deepEqual([run.state, run.wait_result], ['running', 'matched']);

  const running = await peer.waitForTodo('build-1');
  assert.equal(running.cmd, 'todo_upsert');
  assert.equal(running.source, 'bash');
  assert.equal(running.state, 'running');
  assert.match(running.summary!, /^bash task build-1 running: pid \d+, running after \d+\.\d s$/);
  writeFileSync(go, '');

  const done = await peer.waitForTodo('build-1', (todo) => todo.state === 'done');
  assert.match(done.summary!, /^bash task build-1 done: exit 3 after \d+\.\d s$/);
  const body = done.body!.split('\n');
  assert.equal(body[0], `command: ${command}`);
  assert.equal(body[1], 'state: done');
  assert.equal(body[2], 'exit: code 3');
  assert.match(body[3]!, /^runtime: \d+\.\d s$/);
  assert.deepEqual(body.slice(4), [
    `--- stdout (17 bytes): ${run.stdout_path}`,
    'started',
    'finished',
    `--- stderr (5 bytes): ${run.stderr_path}`,
    'oops',
  ]);
  const final = await tools.ok('status', { id: 'build-1' });
  assert.equal(done.updated_at, Date.parse(final.ended_at), 'updated_at is the time the task ended');

  await deliverSentinel(tools, peer, 'sentinel-1');
  assert.equal(peer.todos.has('build-1'), false, 'status handed the result over, so the todo is gone');
  await tools.ok('status', { id: 'build-1' });
  await deliverSentinel(tools, peer, 'sentinel-2');
  assert.deepEqual(
    peer.requestsFor('build-1').map((request) => `${request.cmd} ${request.state ?? ''}`.trim()),
    ['todo_upsert running', 'todo_upsert done', 'todo_clear'],
    'a second status of a cleared task sends nothing',
  );
});

test('a result run returns inline makes no todo, and one that ends after run returned always does', async (t) => {
  const { peer, tools } = await startDaemonWithPeer(t);
  const quick = await tools.ok('run', { command: 'echo quick', name: 'quick' });
  assert.equal(quick.state, 'done');
  // Tasks that end right around run's wait: each is either returned inline or ends after run returned.
  const edge = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      tools.ok('run', {
        command: `sleep 0.${String(5 + (i % 10)).padStart(2, '0')}`,
        name: `edge-${i}`,
        wait_seconds: 0.1,
      }),
    ),
  );
  const inline = edge.filter((task) => task.state === 'done').map((task) => task.id as string);
  const later = edge.filter((task) => task.state !== 'done').map((task) => task.id as string);
  t.diagnostic(`${inline.length} returned inline, ${later.length} ended after run returned`);
  for (const id of later) await peer.waitForTodo(id, (todo) => todo.state === 'done');
  await deliverSentinel(tools, peer, 'sentinel');
  assert.deepEqual(peer.requestsFor('quick'), []);
  for (const id of inline) assert.deepEqual(peer.requestsFor(id), [], `${id} came back inline and must have no todo`);
});

test('reusing the name of a finished task clears the todo the old task left', async (t) => {
  const { peer, tools } = await startDaemonWithPeer(t);
  await tools.ok('run', { command: 'exit 1', name: 'job', wait_seconds: 0 });
  await peer.waitForTodo('job', (todo) => todo.state === 'done');
  const again = await tools.ok('run', { command: 'echo again', name: 'job' });
  assert.equal(again.state, 'done');
  await deliverSentinel(tools, peer, 'sentinel');
  assert.equal(peer.todos.has('job'), false);
  assert.equal(peer.requestsFor('job').at(-1)!.cmd, 'todo_clear');
});

test('a pending task is shown as pending, then running, and a cancelled one as killed', async (t) => {
  const { peer, daemon, tools } = await startDaemonWithPeer(t, { args: ['--max-running', '1'] });
  const go = join(daemon.scratch, 'go');
  await tools.ok('run', { command: `while [ ! -e ${go} ]; do sleep 0.02; done`, name: 'first', wait_seconds: 0 });
  assert.equal((await tools.ok('run', { command: 'sleep 30', name: 'second', wait_seconds: 0 })).state, 'pending');
  assert.equal((await tools.ok('run', { command: 'true', name: 'third', wait_seconds: 0 })).state, 'pending');
  const pending = await peer.waitForTodo('second');
  assert.equal(pending.state, 'pending');
  assert.equal(pending.summary, 'bash task second pending: waiting for a free slot');
  await tools.ok('kill', { id: 'third' });
  const killed = await peer.waitForTodo('third', (todo) => todo.state === 'killed');
  assert.match(killed.body!, /^exit: none$/m);
  writeFileSync(go, '');
  await peer.waitForTodo('second', (todo) => todo.state === 'running');
  await tools.ok('kill', { id: 'second', force: true });
  const ended = await peer.waitForTodo('second', (todo) => todo.state === 'killed');
  assert.match(ended.summary!, /^bash task second killed: SIGKILL \(exit 137\) after \d+\.\d s$/);
  assert.match(ended.body!, /^exit: signal SIGKILL \(code 137\)$/m);
});

test('the end todo of a task that left a process running counts it, and kill still ends it', async (t) => {
  const { peer, daemon, tools } = await startDaemonWithPeer(t);
  await tools.ok('run', { command: 'sleep 30 >/dev/null 2>&1 & echo bye', name: 'leaver', wait_seconds: 0 });
  const done = await peer.waitForTodo('leaver', (todo) => todo.state === 'done');
  assert.match(done.summary!, /^bash task leaver done: exit 0 after \d+\.\d s; 1 process\(es\) still alive$/);
  assert.match(done.body!, /^still alive: 1 process\(es\) of the task \(kill ends them\)$/m);
  // The daemon carries the test marker too; a task's shim is not counted.
  const left = () => findMarkedProcesses(`HIVE_TEST_MARK=${daemon.marker}`).filter((pid) => pid !== daemon.child.pid);
  assert.ok(await waitFor(() => left().length === 1), 'the sleep is all that is left');
  assert.equal((await tools.ok('kill', { id: 'leaver', force: true })).signal, 'SIGKILL');
  assert.ok(await waitFor(() => left().length === 0), `the sleep was killed (${daemon.containment})`);
});

test('a status that peeks leaves a finished task todo for the agent; one that does not takes it', async (t) => {
  const { peer, tools } = await startDaemonWithPeer(t);
  await tools.ok('run', { command: 'sleep 0.2; echo done', name: 'watched', wait_seconds: 0 });
  await peer.waitForTodo('watched', (todo) => todo.state === 'done');
  const peeked = await tools.ok('status', { id: 'watched', peek: true });
  assert.equal(peeked.state, 'done');
  await deliverSentinel(tools, peer, 'after-peek');
  assert.equal(peer.todos.get('watched')?.state, 'done', 'the todo is still shown after a peek');
  await tools.ok('status', { id: 'watched' });
  await deliverSentinel(tools, peer, 'after-status');
  assert.equal(peer.todos.has('watched'), false, 'a status without peek handed the result over');
});

test("a caller that hangs up before its answer is handed nothing: the end of its run, of the task its status waited on, or of a session's task its tasks/result waited on, stays a todo", async (t) => {
  const { peer, daemon, tools } = await startDaemonWithPeer(t);
  const gateOf = (name: string) => join(daemon.scratch, name);
  const held = (name: string, code: number) =>
    `while [ ! -e ${gateOf(name)} ]; do sleep 0.02; done; echo fin; exit ${code}`;
  /** Sends a request on a connection of its own (`send`); once task `name` runs, hangs up, then lets it end. */
  const hangUp = async (send: (signal: AbortSignal) => Promise<unknown>, name: string) => {
    const aborted = new AbortController();
    const call = send(aborted.signal);
    await tools.statusWhen(name, (view) => view.state === 'running', `${name} runs`, 30_000, { peek: true });
    aborted.abort();
    await call.catch(() => {});
    await fetch(`${daemon.origin}/healthz`); // the daemon has read past the hang-up
    writeFileSync(gateOf(name), '');
  };
  const toolCall = (tool: string, args: Record<string, unknown>) => (signal: AbortSignal) =>
    modernRequest(daemon.url, 'tools/call', { name: tool, arguments: args }, { signal });

  // Before, run's end within its wait was handed to nobody and made no todo: the end was lost.
  await hangUp(toolCall('run', { command: held('in-run', 5), name: 'in-run', wait_seconds: 30 }), 'in-run');
  const ranOut = await peer.waitForTodo('in-run', (todo) => todo.state === 'done');
  assert.match(ranOut.summary!, /^bash task in-run done: exit 5 /);

  // Before, status's wait cleared the done todo as if its caller had been handed the end.
  await tools.ok('run', { command: held('in-status', 7), name: 'in-status', wait_seconds: 0 });
  await peer.waitForTodo('in-status', (todo) => todo.state === 'running');
  await hangUp(toolCall('status', { id: 'in-status', wait_seconds: 30 }), 'in-status');
  await peer.waitForTodo('in-status', (todo) => todo.state === 'done');

  // So did a 2025 session's tasks/result, which waits for its task's end.
  const session = await openSession(daemon.url, { name: 'tasks-client', version: '1' }, { tasks: {} });
  const created = await session.rpc('tools/call', {
    name: 'run',
    arguments: { command: held('in-result', 9), name: 'in-result' },
    task: { ttl: 60_000 },
  });
  await peer.waitForTodo('in-result', (todo) => todo.state === 'running');
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tasks/result',
    params: { taskId: created.result.task.taskId },
  });
  await hangUp(
    (signal) => request(daemon.url, { method: 'POST', headers: session.headers, body, signal }),
    'in-result',
  );
  await peer.waitForTodo('in-result', (todo) => todo.state === 'done');

  const ids = ['in-run', 'in-status', 'in-result'];
  await deliverSentinel(tools, peer, 'sentinel');
  assert.deepEqual(
    ids.map((id) => peer.todos.get(id)?.state),
    ['done', 'done', 'done'],
    'every end waits for the agent as a todo',
  );
  // A caller that is there is handed them: then they go.
  for (const id of ids) assert.equal((await tools.ok('status', { id })).state, 'done');
  await deliverSentinel(tools, peer, 'sentinel-2');
  assert.deepEqual(
    ids.map((id) => peer.todos.has(id)),
    [false, false, false],
  );
});
