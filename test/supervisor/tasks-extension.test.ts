// run as a task of the Tasks extension (io.modelcontextprotocol/tasks), as a raw 2026-07-28 client
// sees it: the handle, tasks/get to the end, tasks/cancel, and what a client that did not declare
// the extension gets instead.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { deliverSentinel, startDaemonWithPeer } from '../helpers/harness-peer.js';
import { connectClient } from '../helpers/mcp-client.js';
import { modernRequest, modernResult, TASKS_EXTENSION } from '../helpers/modern-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

const DAY_MS = 86_400_000;

/** Polls tasks/get, as a client does, until the task is no longer working; returns the last answer. */
async function pollToEnd(url: string, taskId: string): Promise<any> {
  let last: any;
  await waitFor(
    async () => {
      last = await modernResult(url, 'tasks/get', { taskId }, { tasks: true });
      return last.status !== 'working';
    },
    20_000,
    50,
  );
  return last;
}

test('a run that outlives its wait answers a task to a client that declares the extension; tasks/get says working, then completed with the output, and hands the result over as status does', async (t) => {
  const { peer, daemon, tools } = await startDaemonWithPeer(t);
  const go = join(daemon.scratch, 'go');
  const command = `echo started; while [ ! -e ${go} ]; do sleep 0.02; done; echo finished`;
  const created = await modernResult(
    daemon.url,
    'tools/call',
    { name: 'run', arguments: { command, name: 'build', wait_seconds: 0.2 } },
    { tasks: true },
  );
  assert.deepEqual(
    {
      resultType: created.resultType,
      taskId: created.taskId,
      status: created.status,
      ttlMs: created.ttlMs,
      pollIntervalMs: created.pollIntervalMs,
    },
    { resultType: 'task', taskId: 'build', status: 'working', ttlMs: 7 * DAY_MS, pollIntervalMs: 1000 },
  );
  assert.ok(
    Date.parse(created.createdAt) <= Date.parse(created.lastUpdatedAt),
    `${created.createdAt} ${created.lastUpdatedAt}`,
  );
  // run answers once the task has started: its pid is known.
  assert.match(created.statusMessage, /^task build running: pid \d+/);

  const working = await waitFor(async () => {
    const task = await modernResult(daemon.url, 'tasks/get', { taskId: 'build' }, { tasks: true });
    return /^task build running: pid \d+/.test(task.statusMessage) ? task : undefined;
  }, 15_000);
  assert.deepEqual([working?.resultType, working?.status, working?.result], ['complete', 'working', undefined]);
  assert.equal(
    (await peer.waitForTodo('build')).state,
    'running',
    'the task is a todo as any run that outlives its wait',
  );

  writeFileSync(go, '');
  const completed = await pollToEnd(daemon.url, 'build');
  assert.equal(completed.status, 'completed');
  assert.equal(completed.result.isError, false);
  assert.deepEqual(
    [completed.result.structuredContent.state, completed.result.structuredContent.stdout_tail],
    ['done', 'started\nfinished\n'],
  );
  assert.match(
    completed.result.content[0].text,
    /^task build done: exit 0 after \d+\.\d s\n--- stdout\nstarted\nfinished\n$/,
  );
  await deliverSentinel(tools, peer, 'sentinel');
  assert.equal(peer.todos.has('build'), false, 'tasks/get handed the result over, so the todo is gone');
});

test('a task that exits non-zero is a completed tool result with isError, and one the client cancels is killed with everything it started', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--kill-grace-ms', '300'] });
  await modernResult(
    daemon.url,
    'tools/call',
    { name: 'run', arguments: { command: 'sleep 0.3; echo broken >&2; exit 3', name: 'fails', wait_seconds: 0 } },
    { tasks: true },
  );
  const failed = await pollToEnd(daemon.url, 'fails');
  assert.deepEqual(
    [
      failed.status,
      failed.result.isError,
      failed.result.structuredContent.exit_code,
      failed.result.structuredContent.stderr_tail,
    ],
    ['completed', true, 3, 'broken\n'],
  );

  // Background jobs ignore SIGINT (bash -c): cancel escalates to SIGKILL as kill does.
  const created = await modernResult(
    daemon.url,
    'tools/call',
    {
      name: 'run',
      arguments: {
        command: 'sleep 300 & sleep 300 & echo up; wait',
        name: 'server',
        env: { CANCEL_MARK: daemon.marker },
        wait_seconds: 0,
      },
    },
    { tasks: true },
  );
  assert.equal(created.resultType, 'task');
  const marker = `CANCEL_MARK=${daemon.marker}`;
  await waitFor(() => findMarkedProcesses(marker).length >= 3);
  assert.deepEqual(await modernResult(daemon.url, 'tasks/cancel', { taskId: 'server' }, { tasks: true }), {
    resultType: 'complete',
  });
  const cancelled = await pollToEnd(daemon.url, 'server');
  assert.deepEqual([cancelled.status, cancelled.result, cancelled.error], ['cancelled', undefined, undefined]);
  assert.match(cancelled.statusMessage, /^task server killed/);
  assert.deepEqual(
    await waitFor(() => findMarkedProcesses(marker).length === 0),
    true,
    `left: ${findMarkedProcesses(marker).join(', ')}`,
  );
});

test('a client that does not declare the extension never gets a task: the run comes back running, and tasks/* is refused with -32021', async (t) => {
  const daemon = await startTestDaemon(t);
  const plain = await modernResult(daemon.url, 'tools/call', {
    name: 'run',
    arguments: { command: 'sleep 30', name: 'plain', wait_seconds: 0 },
  });
  assert.deepEqual([plain.resultType, plain.structuredContent.state], ['complete', 'running']);
  const legacy = await connectClient(t, daemon.url);
  assert.equal((await legacy.ok('run', { command: 'sleep 30', name: 'old', wait_seconds: 0 })).state, 'running');

  const refused = await modernRequest(daemon.url, 'tasks/get', { taskId: 'plain' });
  assert.deepEqual([refused.status, refused.body.error.code], [400, -32021]);
  assert.deepEqual(refused.body.error.data, { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });

  // A run asked to wait for readiness answers what it found, task or no task.
  const ready = await modernResult(
    daemon.url,
    'tools/call',
    { name: 'run', arguments: { command: 'echo ready; sleep 30', name: 'ready', wait_for: 'ready', wait_seconds: 10 } },
    { tasks: true },
  );
  assert.deepEqual([ready.resultType, ready.structuredContent.wait_result], ['complete', 'matched']);

  const unknown = await modernRequest(daemon.url, 'tasks/get', { taskId: 'nope' }, { tasks: true });
  assert.deepEqual([unknown.status, unknown.body.error.code], [200, -32602]);
  assert.equal(
    unknown.body.error.message,
    'Invalid params: params.taskId "nope" names no task (it never existed, or was pruned after the retention period)',
  );
  const mismatch = await modernRequest(
    daemon.url,
    'tasks/cancel',
    { taskId: 'plain' },
    { tasks: true, headers: { 'mcp-name': 'old' } },
  );
  assert.deepEqual([mismatch.status, mismatch.body.error.code], [400, -32020]);
  assert.equal(
    (await modernResult(daemon.url, 'tasks/get', { taskId: 'plain' }, { tasks: true })).status,
    'working',
    'the mismatched cancel did nothing',
  );
  for (const id of ['plain', 'old', 'ready']) await legacy.ok('kill', { id, force: true });
});
