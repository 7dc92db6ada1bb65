// A task's events pushed where the client can hear them, over real HTTP: a 2025 session's GET
// stream carries a channel event (Claude Code's notifications/claude/channel) for each task its run
// left running, once per event (an exec that waits for a person, the end); a 2026-07-28 client of
// the Tasks extension hears notifications/tasks on subscriptions/listen. Each test waits for the
// events it expects, never for a time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDaemonBinary, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { modernMeta, modernRequest, modernResult, TASKS_EXTENSION } from '../helpers/modern-client.js';
import { MCP_HEADERS } from '../helpers/raw-mcp.js';
import { openSession as openSessionAs, type Session } from '../helpers/session-client.js';
import { openSse } from '../helpers/sse.js';
import { startPolicyDaemon, waitForApprovals } from '../policy/policy-daemon.js';

const CLAUDE_CODE = { name: 'claude-code', version: '2.1.332' };

/** Opens a 2025-11-25 session as Claude Code, unless told otherwise. */
const openSession = (url: string, clientInfo = CLAUDE_CODE, capabilities = {}) =>
  openSessionAs(url, clientInfo, capabilities);

const channelOf = (taskId: string, event: string) => (message: any) =>
  message.method === 'notifications/claude/channel' &&
  message.params.meta.task_id === taskId &&
  message.params.meta.event === event;

async function sessionStream(daemon: TestDaemon, session: Session) {
  const { 'content-type': _, ...headers } = session.headers;
  const stream = await openSse(daemon.url, { ...headers, accept: 'text/event-stream' });
  assert.equal(stream.status, 200);
  assert.match(String(stream.headers['content-type']), /^text\/event-stream/);
  return stream;
}

test("a 2025 session's GET stream carries a channel event for the end of each task its run left running, once", async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  assert.deepEqual(session.initialized.capabilities.experimental, { 'claude/channel': {} });
  const stream = await sessionStream(daemon, session);
  t.after(() => stream.close());

  const quick = await session.call('run', { command: 'echo quick' });
  assert.equal(quick.state, 'done', 'a run that finished within its wait is answered, and not pushed');
  const lines = 'for i in $(seq 1 30); do echo line $i; done; echo oops >&2; exit 3';
  const slow = await session.call('run', { command: lines, wait_seconds: 0 });
  assert.equal(slow.state, 'running');
  const ended = await stream.next(channelOf(slow.id, 'task_ended'), `the end of ${slow.id}`);
  assert.deepEqual(ended.params.meta, { event: 'task_ended', task_id: slow.id, state: 'done', exit_code: '3' });
  const content = ended.params.content.split('\n');
  assert.match(content[0], new RegExp(`^bash task ${slow.id} done: exit 3 after \\d+\\.\\d s$`));
  assert.equal(content[1], `command: ${lines}`);
  assert.deepEqual(content.slice(2, 8), [
    'stdout (231 bytes), first lines:',
    ...[1, 2, 3, 4, 5].map((i) => `line ${i}`),
  ]);
  assert.deepEqual(content.slice(8, 14), ['last lines:', ...[26, 27, 28, 29, 30].map((i) => `line ${i}`)]);
  assert.deepEqual(content.slice(15), ['stderr (1 lines):', 'oops']);

  // Its status, read after the end, pushes nothing more; a later task's end comes after it, alone.
  assert.equal((await session.call('status', { id: slow.id, wait_seconds: 5 })).state, 'done');
  const later = await session.call('run', { command: 'echo later', wait_seconds: 0 });
  await stream.next(channelOf(later.id, 'task_ended'), `the end of ${later.id}`);
  const channel = stream.messages.filter((message) => message.method === 'notifications/claude/channel');
  assert.deepEqual(
    channel.map((message) => message.params.meta.task_id),
    [slow.id, later.id],
    'one event per end, none for the quick run',
  );
});

test("a channel event that comes while no stream is open waits for the session's next stream", async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const task = await session.call('run', { command: 'echo unheard', wait_seconds: 0 });
  assert.equal((await session.call('status', { id: task.id, wait_seconds: 10 })).state, 'done');
  const stream = await sessionStream(daemon, session);
  t.after(() => stream.close());
  const ended = await stream.next(channelOf(task.id, 'task_ended'), `the end of ${task.id}`);
  assert.match(ended.params.content, /^stdout \(1 lines\):\nunheard$/m);
  const second = await openSse(daemon.url, { ...session.headers, accept: 'text/event-stream' });
  assert.equal(second.status, 409, 'one stream at a time');
  await second.ended;
});

test('an exec that waits for a person is pushed with how the operator answers it, then the end', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const session = await openSession(daemon.url);
  const stream = await sessionStream(daemon, session);
  t.after(() => stream.close());
  const task = await session.call('run', { command: 'hive-asked now; echo after', wait_seconds: 0, env: daemon.env });
  const [waiting] = await waitForApprovals(daemon, task.id);
  const asked = await stream.next(channelOf(task.id, 'approval_waiting'), 'the waiting exec');
  assert.deepEqual(asked.params.meta, { event: 'approval_waiting', task_id: task.id, state: 'running' });
  assert.match(
    asked.params.content,
    new RegExp(
      `^waiting for approval: \`hive-asked now\` \\(a person decides\\); the operator answers with hive-bash approve ${waiting!.id} or hive-bash deny ${waiting!.id}$`,
      'm',
    ),
  );
  const denied = await fetch(new URL(`/approvals/${waiting!.id}/deny`, daemon.url), { method: 'POST' });
  assert.equal(denied.status, 200, await denied.text());
  const ended = await stream.next(channelOf(task.id, 'task_ended'), `the end of ${task.id}`);
  assert.equal(ended.params.meta.exit_code, '0');
  const events = stream.messages.filter((message) => message.params?.meta?.task_id === task.id);
  assert.deepEqual(
    events.map((message) => message.params.meta.event),
    ['approval_waiting', 'task_ended'],
  );
});

test('a 2026-07-28 client of the Tasks extension hears notifications/tasks on subscriptions/listen until the end', async (t) => {
  const daemon = await startTestDaemon(t);
  const tasks = { extensions: { [TASKS_EXTENSION]: {} } };
  const go = `${daemon.scratch}/go`;
  const created = await modernResult(
    daemon.url,
    'tools/call',
    {
      name: 'run',
      arguments: { command: `while [ ! -e ${go} ]; do sleep 0.02; done; echo finished`, wait_seconds: 0 },
    },
    { tasks: true },
  );
  assert.equal(created.resultType, 'task');
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 'listen-1',
    method: 'subscriptions/listen',
    params: { notifications: { taskIds: [created.taskId, 'no-such-task'] }, _meta: modernMeta(tasks) },
  });
  const headers = {
    ...MCP_HEADERS,
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': 'subscriptions/listen',
  };
  const stream = await openSse(daemon.url, headers, 'POST', body);
  t.after(() => stream.close());
  assert.equal(stream.status, 200);
  const ack = await stream.next((m) => m.method === 'notifications/subscriptions/acknowledged', 'the acknowledgement');
  assert.deepEqual(ack.params, {
    _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
    notifications: { taskIds: [created.taskId] },
  });
  const working = await stream.next((m) => m.method === 'notifications/tasks', 'the working task');
  assert.equal(working.params.status, 'working');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(go, '');
  const completed = await stream.next((m) => m.params?.status === 'completed', 'the completed task');
  assert.equal(completed.params.taskId, created.taskId);
  assert.equal(completed.params.result.structuredContent.stdout_tail, 'finished\n');
  assert.equal(completed.params.result.isError, false);
  await stream.ended;
  assert.deepEqual(stream.messages.at(-1), { jsonrpc: '2.0', id: 'listen-1', result: { resultType: 'complete' } });
  assert.deepEqual(
    stream.messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params.status),
    ['working', 'completed'],
  );
  // The result was not handed over: tasks/get still gives it.
  const got = await modernResult(daemon.url, 'tasks/get', { taskId: created.taskId }, { tasks: true });
  assert.equal(got.status, 'completed');
});

test('subscriptions/listen refuses task ids without the extension, and params it cannot read, naming them', async (t) => {
  const daemon = await startTestDaemon(t);
  const missing = await modernRequest(daemon.url, 'subscriptions/listen', { notifications: { taskIds: ['task-1'] } });
  assert.equal(missing.body.error.code, -32021);
  assert.match(missing.body.error.message, /extensions\["io.modelcontextprotocol\/tasks"\]/);
  const bad = await modernRequest(
    daemon.url,
    'subscriptions/listen',
    { notifications: { taskIds: 'task-1' } },
    { tasks: true },
  );
  assert.equal(bad.body.error.code, -32602);
  assert.equal(
    bad.body.error.message,
    'Invalid params: params.notifications.taskIds must be an array of at most 100 task ids (strings, the taskId a run answered with); got "task-1" (string)',
  );
  const none = await modernRequest(daemon.url, 'subscriptions/listen', {}, { tasks: true });
  assert.match(none.body.error.message, /^Invalid params: subscriptions\/listen needs params.notifications, an object/);
});

test('--decline-discover claude-code answers server/discover "method not found" to Claude Code alone, so that it opens a session', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--decline-discover', 'claude-code'] });
  const meta = (clientInfo: object, capabilities = {}) => ({
    meta: { ...modernMeta(capabilities), 'io.modelcontextprotocol/clientInfo': clientInfo },
  });
  const declined = await modernRequest(daemon.url, 'server/discover', {}, meta(CLAUDE_CODE));
  assert.equal(declined.status, 404);
  assert.equal(declined.body.error.code, -32601);
  assert.match(
    declined.body.error.message,
    /^Method not found: server\/discover is declined to this client \(--decline-discover\): open a 2025-11-25 session with initialize/,
  );
  const declaring = await modernRequest(
    daemon.url,
    'server/discover',
    {},
    meta({ name: 'other', version: '1' }, { experimental: { 'claude/channel': {} } }),
  );
  assert.equal(declaring.body.error.code, -32601);
  const other = await modernResult(daemon.url, 'server/discover');
  assert.deepEqual(other.supportedVersions, ['2026-07-28']);
  // Declined, it opens a session, which offers the channel.
  const session = await openSession(daemon.url);
  assert.deepEqual(session.initialized.capabilities.experimental, { 'claude/channel': {} });
});

test('--decline-discover always declines every discover; a bad value stops the start, naming the flag and what it accepts', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--decline-discover', 'always'] });
  assert.equal((await modernRequest(daemon.url, 'server/discover')).body.error.code, -32601);
  const bad = await runDaemonBinary(['--decline-discover', 'claude']);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    'hive-bash-daemon: --decline-discover must be one of never, claude-code, always; got "claude"\n',
  );
});
