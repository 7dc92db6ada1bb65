// 2025-11-25's Tasks utility in a session, over real HTTP: run called with params.task answers a
// task at once; notifications/tasks/status tells the session's GET stream of each change of its
// status, once; tasks/get, tasks/result, tasks/list and tasks/cancel serve it to its own session
// only; params that do not fit are refused, naming the field. Each test waits for events, never for
// a time: a task here ends when the test makes a file.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { openSession as openSessionAs, type Session } from '../helpers/session-client.js';
import { openSse } from '../helpers/sse.js';

const CLIENT = { name: 'tasks-client', version: '1' };
const openSession = (url: string, capabilities: Record<string, unknown> = { tasks: {} }) =>
  openSessionAs(url, CLIENT, capabilities);

async function sessionStream(daemon: TestDaemon, session: Session, t: TestContext) {
  const { 'content-type': _, ...headers } = session.headers;
  const stream = await openSse(daemon.url, { ...headers, accept: 'text/event-stream' });
  assert.equal(stream.status, 200);
  t.after(() => stream.close());
  return stream;
}

/** A directory for the file that ends a task, removed after the test. */
async function gate(t: TestContext): Promise<{ command: string; open: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'session-tasks-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'go');
  return {
    command: `while [ ! -e ${file} ]; do sleep 0.05; done; echo finished`,
    open: () => writeFile(file, ''),
  };
}

const statusOf = (taskId: string, status: string) => (message: any) =>
  message.method === 'notifications/tasks/status' &&
  message.params.taskId === taskId &&
  message.params.status === status;

test('a session offers tasks: run as a task answers at once, its end is told on the GET stream once, tasks/result gives the result', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  assert.deepEqual(session.initialized.capabilities.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
  assert.match(session.initialized.instructions, /your client holds it as a task/);
  const listed = (await session.rpc('tools/list', {})).result.tools as any[];
  assert.deepEqual(
    listed.filter((tool) => tool.execution !== undefined).map((tool) => [tool.name, tool.execution]),
    [['run', { taskSupport: 'optional' }]],
  );
  const stream = await sessionStream(daemon, session, t);
  const { command, open } = await gate(t);

  const created = await session.rpc('tools/call', { name: 'run', arguments: { command }, task: { ttl: 60_000 } });
  const task = created.result.task;
  assert.equal(task.status, 'working');
  assert.equal(typeof task.taskId, 'string');
  assert.equal(typeof task.ttl, 'number');
  assert.equal(typeof task.pollInterval, 'number');
  assert.ok(!Number.isNaN(Date.parse(task.createdAt)));
  assert.equal((await session.rpc('tasks/get', { taskId: task.taskId })).result.status, 'working');
  const listedTasks = (await session.rpc('tasks/list', {})).result.tasks as any[];
  assert.deepEqual(
    listedTasks.map((one) => one.taskId),
    [task.taskId],
  );

  const result = session.rpc('tasks/result', { taskId: task.taskId });
  await open();
  const ended = await stream.next(statusOf(task.taskId, 'completed'), `the end of ${task.taskId}`);
  assert.equal(ended.params.ttl, task.ttl);
  const answer = (await result).result;
  assert.equal(answer.structuredContent.id, task.taskId);
  assert.equal(answer.structuredContent.state, 'done');
  assert.equal(answer.isError, undefined);
  assert.match(answer.content[0].text, /finished/);
  assert.deepEqual(answer._meta, { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } });
  assert.equal((await session.rpc('tasks/get', { taskId: task.taskId })).result.status, 'completed');

  // Once per change: a later event (another task's end) comes after it, and it was not told again.
  const other = await session.rpc('tools/call', { name: 'run', arguments: { command: 'exit 4' }, task: {} });
  const second = (await session.rpc('tasks/result', { taskId: other.result.task.taskId })).result;
  assert.equal(second.isError, true, 'a non-zero exit is an isError result, as run gives it');
  await stream.next(statusOf(other.result.task.taskId, 'completed'), 'the second end');
  const told = stream.messages.filter((message) => message.params?.taskId === task.taskId);
  assert.deepEqual(
    told.map((message) => message.params.status),
    ['completed'],
  );
});

test('tasks/cancel kills a task of the session; another session cannot see it', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const stream = await sessionStream(daemon, session, t);
  const created = await session.rpc('tools/call', { name: 'run', arguments: { command: 'sleep 300' }, task: {} });
  const { taskId } = created.result.task;

  const stranger = await openSession(daemon.url);
  const seen = await stranger.rpc('tasks/get', { taskId });
  assert.equal(seen.error.code, -32602);
  assert.match(seen.error.message, /params\.taskId .* names no task of this session/);
  assert.deepEqual((await stranger.rpc('tasks/list', {})).result.tasks, []);
  assert.equal((await stranger.rpc('tasks/cancel', { taskId })).error.code, -32602);

  const cancelled = await session.rpc('tasks/cancel', { taskId });
  assert.equal(cancelled.result.status, 'cancelled');
  assert.match(cancelled.result.statusMessage, /^task \S+ cancelled: its processes are sent SIGINT/, 'not "running"');
  await stream.next(statusOf(taskId, 'cancelled'), `the cancel of ${taskId}`);
  assert.equal((await session.rpc('tasks/get', { taskId })).result.status, 'cancelled');
  const again = await session.rpc('tasks/cancel', { taskId });
  assert.match(again.error.message, /has already ended \(cancelled\)/);
  const result = (await session.rpc('tasks/result', { taskId })).result;
  assert.equal(result.structuredContent.state, 'killed');
});

test("a run of a finished task's name by another session replaces it for that session alone: the first sees it gone", async (t) => {
  const daemon = await startTestDaemon(t);
  const first = await openSession(daemon.url);
  const call = (command: string) => ({ name: 'run', arguments: { command, name: 'shared' }, task: {} });
  const { taskId } = (await first.rpc('tools/call', call('echo first'))).result.task;
  assert.equal((await first.rpc('tasks/result', { taskId })).result.structuredContent.stdout_tail, 'first\n');

  const second = await openSession(daemon.url);
  const rerun = (await second.rpc('tools/call', call('echo second-private'))).result.task;
  assert.equal(rerun.taskId, taskId, 'the same name, the same id');
  assert.equal((await second.rpc('tasks/result', { taskId })).result.structuredContent.stdout_tail, 'second-private\n');

  // Before, the first session's tasks/get, tasks/result and tasks/list showed the second's run.
  for (const method of ['tasks/get', 'tasks/result']) {
    const seen = await first.rpc(method, { taskId });
    assert.equal(seen.error?.code, -32602, `${method}: ${JSON.stringify(seen).slice(0, 300)}`);
    assert.match(seen.error.message, /a run of its name replaces it/);
  }
  assert.deepEqual((await first.rpc('tasks/list', {})).result.tasks, []);
  assert.equal((await second.rpc('tasks/list', {})).result.tasks.length, 1);
});

test('bad task params are refused, naming the field, echoing the value and saying what is accepted', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const badTask = await session.rpc('tools/call', { name: 'run', arguments: { command: 'true' }, task: 5 });
  assert.equal(badTask.error.code, -32602);
  assert.match(badTask.error.message, /params\.task must be an object such as \{"ttl": 60000\}.*got 5 \(number\)/);
  const badTtl = await session.rpc('tools/call', { name: 'run', arguments: { command: 'true' }, task: { ttl: -1 } });
  assert.match(badTtl.error.message, /params\.task .*got \{"ttl":-1\}/);
  const notRun = await session.rpc('tools/call', { name: 'list', arguments: {}, task: {} });
  assert.equal(notRun.error.code, -32601);
  assert.match(
    notRun.error.message,
    /tool "list" \(string\) cannot be called as a task \(params\.task\); only run can/,
  );
  const noId = await session.rpc('tasks/get', { taskId: 7 });
  assert.match(noId.error.message, /params\.taskId must be a string.*got 7 \(number\)/);
  const cursor = await session.rpc('tasks/list', { cursor: 'x' });
  assert.match(cursor.error.message, /params\.cursor "x" \(string\) is no cursor of this server/);
});

test('a session whose client declares no tasks capability is told to wait, as before', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url, {});
  assert.match(session.initialized.instructions, /nothing announces its end/);
});
