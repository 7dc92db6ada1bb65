// A task cannot approve an exec or step around the policy: a process of one of the daemon's own
// tasks that answers an approval (hive-bash approve, a POST to /approvals/ID/approve with curl, a
// tasks/update, or the retry of its own run with the person's accept) is refused with
// ERR_APPROVAL_FROM_TASK and the exec still waits; a run it asks the daemon for is under the same
// policy (denied and asked about as any other). The same answer from outside the tasks is taken.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI_JS } from '../cli/cli.js';
import { nativeContainment } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { MODERN_VERSION, TASKS_EXTENSION } from '../helpers/modern-client.js';
import { listApprovals, startPolicyDaemon, waitForApprovals } from './policy-daemon.js';

/**
 * `node calls.mjs URL WAITING_TASK APPROVAL_ID PATH`, run inside a task: each way a task might
 * answer the approval, then a run of a denied program and of one asked about (answering that
 * one's question itself); one JSON line each.
 */
const CALLS_SCRIPT = `
const [url, waitingTask, approvalId, path] = process.argv.slice(2);
const mcp = async (method, params, capabilities = {}) => {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '${MODERN_VERSION}', 'io.modelcontextprotocol/clientCapabilities': capabilities };
  const name = method === 'tools/call' ? params.name : params.taskId;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '${MODERN_VERSION}', 'mcp-method': method, 'mcp-name': name };
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: meta } }) });
  return res.json();
};
const print = (line) => console.log(JSON.stringify(line));
const accept = { ['approve-' + approvalId]: { action: 'accept', content: {} } };
const update = await mcp('tasks/update', { taskId: waitingTask, inputResponses: accept }, { extensions: { '${TASKS_EXTENSION}': {} } });
print({ way: 'tasks/update', code: update.error?.data?.error?.code ?? update.error?.message });
const env = { PATH: path };
const denied = await mcp('tools/call', { name: 'run', arguments: { command: 'hive-guarded push --force inner; echo "inner=$?"', env, wait_seconds: 20 } });
print({ way: 'run denied', stdout: denied.result.structuredContent.stdout_tail, denied: denied.result.structuredContent.policy.denied_count });
const elicitation = { elicitation: { form: {} } };
const args = { name: 'run', arguments: { command: 'hive-asked inner', env, wait_seconds: 20 } };
const asked = await mcp('tools/call', args, elicitation);
const [key] = Object.keys(asked.result.inputRequests ?? {});
const retry = await mcp('tools/call', { ...args, requestState: asked.result.requestState,
  inputResponses: { [key]: { action: 'accept', content: {} } } }, elicitation);
print({ way: 'run asked', resultType: asked.result.resultType, retry: retry.result.structuredContent.error?.code });
`;

for (const containment of ['cgroup', nativeContainment() === 'cgroup' ? 'process-group' : null] as const) {
  if (containment === null) continue;
  test(`a call from inside a task cannot approve, and a run it makes is under the policy (${containment})`, async (t) => {
    const daemon = await startPolicyDaemon(t, { containment });
    const tools = await connectClient(t, daemon.url);
    const script = join(daemon.dir, 'calls.mjs');
    writeFileSync(script, CALLS_SCRIPT);
    // The exec that waits: its task started from outside, by a client that cannot be asked.
    const waiting = await tools.ok('run', {
      command: 'hive-asked waiting; echo "waiting=$?"',
      env: daemon.env,
      wait_seconds: 0,
    });
    const [approval] = await waitForApprovals(daemon, waiting.id);
    const id = approval!.id;

    const command = [
      `HIVE_BASH_URL='${daemon.url}' '${process.execPath}' '${CLI_JS}' approve ${id} 2>&1; echo "cli=$?"`,
      `curl -s -X POST '${new URL(`/approvals/${id}/approve`, daemon.url).href}'; echo " curl=$?"`,
      `'${process.execPath}' '${script}' '${daemon.url}' ${waiting.id} ${id} '${daemon.env.PATH}'`,
    ].join('\n');
    const caller = await tools.ok('run', { command, wait_seconds: 0 });
    const ended = await tools.statusWhen(
      caller.id,
      (status) => status.state === 'done',
      'the calling task ended',
      90_000,
    );
    const lines = ended.stdout_tail.trim().split('\n');
    const calls = lines.slice(3).map((line: string) => JSON.parse(line));
    assert.deepEqual(
      [calls[1], calls[2].resultType],
      [{ way: 'run denied', stdout: 'inner=126\n', denied: 1 }, 'input_required'],
      "the task's runs are under the policy: denied, and asked about",
    );

    assert.match(
      lines[0],
      new RegExp(
        // Where tasks have cgroups, the socket's tells the task, and no process is read.
        `this approve came from ${containment === 'cgroup' ? 'a socket made in the cgroup' : 'process \\d+'} of task ${caller.id}, and a process of one of this daemon's tasks cannot answer`,
      ),
      ended.stdout_tail,
    );
    assert.equal(lines[1], 'cli=1', 'hive-bash approve inside a task fails');
    const [body, curlCode] = lines[2]!.split(' curl=');
    assert.deepEqual(
      [JSON.parse(body).error.code, curlCode],
      ['ERR_APPROVAL_FROM_TASK', '0'],
      'curl to the route is refused',
    );
    assert.deepEqual(
      [calls[0].code, calls[2].retry],
      ['ERR_APPROVAL_FROM_TASK', 'ERR_APPROVAL_FROM_TASK'],
      `tasks/update and the retry of its own run are refused: ${ended.stdout_tail}`,
    );
    const stillWaiting = (await listApprovals(daemon)).map((exec) => exec.id);
    assert.ok(stillWaiting.includes(id), 'no call from the task answered the exec');
    assert.equal(stillWaiting.length, 2, "the task's own asked run waits too");

    // The same answer from outside the tasks is taken, and the exec runs.
    const answered = await fetch(new URL(`/approvals/${id}/approve`, daemon.url), { method: 'POST' });
    assert.equal(answered.status, 200);
    const done = await tools.statusWhen(
      waiting.id,
      (status) => status.state === 'done',
      'the approved task ended',
      60_000,
    );
    assert.equal(done.stdout_tail, 'hive-asked ran: waiting\nwaiting=0\n');
  });
}
