// Only a person declines, the first answer decides, and waits wait for it. A client's `cancel`
// (what `claude -p` answers at once, asking no one) leaves the exec waiting for the operator's
// hive-bash approve, and the model is told so at once; a status wait waits through a pending
// approval, in both eras; an answer that comes after another decided is told who decided and when.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { runShell } from '../cli/cli.js';
import { connectClient } from '../helpers/mcp-client.js';
import { MODERN_VERSION, modernResult } from '../helpers/modern-client.js';
import { listApprovals, startPolicyDaemon, waitForApprovals, type PolicyDaemon } from './policy-daemon.js';

const ELICITATION = { elicitation: { form: {} } };
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

/** A 2026-07-28 client that declared elicitation and answers each form with `answer` (after `before`). */
async function elicitingClient(
  t: { after(fn: () => unknown): void },
  url: string,
  answer: 'accept' | 'decline' | 'cancel',
  before: () => Promise<void> = async () => {},
) {
  const client = new Client(
    { name: 'hive-bash-test-answers', version: '1.0.0' },
    { capabilities: ELICITATION, versionNegotiation: { mode: { pin: MODERN_VERSION } } },
  );
  const forms: string[] = [];
  client.setRequestHandler('elicitation/create', async (request) => {
    forms.push(request.params.message);
    await before();
    return answer === 'accept' ? { action: 'accept', content: {} } : { action: answer };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  t.after(() => client.close().catch(() => {}));
  return { client, forms };
}

/** The operator's answer through the approvals API (what hive-bash approve and deny send). */
async function operatorAnswers(daemon: PolicyDaemon, id: string, answer: 'approve' | 'deny'): Promise<void> {
  const sent = await fetch(new URL(`/approvals/${id}/${answer}`, daemon.url), { method: 'POST' });
  assert.equal(sent.status, 200, await sent.text());
}

test("a client's cancel leaves the exec waiting for the operator, and the model is told at once", async (t) => {
  const daemon = await startPolicyDaemon(t);
  const { client, forms } = await elicitingClient(t, daemon.url, 'cancel');
  const result = await client.callTool({
    name: 'run',
    arguments: { command: 'hive-asked one; echo "one=$?"', env: daemon.env, wait_seconds: 30 },
  });
  const view = result.structuredContent as any;
  assert.equal(forms.length, 1, 'the client was asked once, and not again after its cancel');
  assert.equal(view.state, 'running', 'the cancel refused nothing');
  const [waiting] = await listApprovals(daemon);
  assert.equal(waiting?.task, view.id, 'the request shows in hive-bash approvals');
  assert.deepEqual(
    view.policy.waiting.map((exec: { id: string }) => exec.id),
    [waiting!.id],
  );
  assert.match(
    view.notes[0],
    new RegExp(
      `^\`hive-asked one\` waits for a person's approval until ${ISO}, then is refused: the user approves it with \`hive-bash approve ${waiting!.id}\`.*; status with wait_seconds waits through it`,
    ),
  );
  const listed = await runShell(t, daemon.url, `hive-bash approvals && hive-bash approve ${waiting!.id}`);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(
    listed.stdout,
    new RegExp(`^${waiting!.id} +${view.id} .* hive-asked one +rule 1: a person decides$`, 'm'),
  );
  const end = await client.callTool({ name: 'status', arguments: { id: view.id, wait_seconds: 30 } });
  assert.equal((end.structuredContent as any).state, 'done');
  assert.equal((end.structuredContent as any).stdout_tail, 'hive-asked ran: one\none=0\n');
});

test('status with wait_seconds waits through a pending approval until the decision, in both eras', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const legacy = await connectClient(t, daemon.url);
  for (const era of ['2025-11-25', '2026-07-28'] as const) {
    const started = await modernResult(daemon.url, 'tools/call', {
      name: 'run',
      arguments: { command: `hive-asked ${era}; echo "asked=$?"`, env: daemon.env, wait_seconds: 0 },
    });
    const id = started.structuredContent.id as string;
    const [waiting] = await waitForApprovals(daemon, id);
    const events: string[] = [];
    const args = { id, wait_seconds: 30, verbose: false };
    const waited = (
      era === '2025-11-25'
        ? legacy.ok('status', args)
        : modernResult(daemon.url, 'tools/call', { name: 'status', arguments: args }).then(
            (got) => got.structuredContent,
          )
    ).then((view) => (events.push('status answered'), view));
    await legacy.ok('list', {}); // a round trip behind the status call
    assert.equal(events.length, 0, `${era}: the status wait is still waiting while the exec waits`);
    await operatorAnswers(daemon, waiting!.id, 'approve');
    events.push('approved');
    const view = await waited;
    assert.deepEqual(events, ['approved', 'status answered'], era);
    assert.equal(view.state, 'done', era);
    assert.equal(view.stdout_tail, `hive-asked ran: ${era}\nasked=0\n`, era);
  }
});

test('the first answer decides, and a later one is told who decided and when', async (t) => {
  const daemon = await startPolicyDaemon(t);

  await t.test("a person's decline after the operator approved: the result says it came too late", async () => {
    let approvalId = '';
    const operatorFirst = async () => {
      approvalId = (await listApprovals(daemon))[0]!.id;
      await operatorAnswers(daemon, approvalId, 'approve');
    };
    const { client } = await elicitingClient(t, daemon.url, 'decline', operatorFirst);
    const result = await client.callTool({
      name: 'run',
      arguments: { command: 'hive-asked late; echo "late=$?"', env: daemon.env, wait_seconds: 30 },
    });
    const view = result.structuredContent as any;
    assert.equal(view.stdout_tail, 'hive-asked ran: late\nlate=0\n', 'the operator approved first: it ran');
    const told = new RegExp(
      `^Your decline of approval ${approvalId} came too late and changed nothing: the operator approved it \\(hive-bash approve\\) at ${ISO}\\.$`,
    );
    assert.match(view.notes[0], told);
    assert.match((result.content as Array<{ text: string }>)[0]!.text.split('\n')[0]!, told);
  });

  await t.test("the operator's deny after a person accepted: hive-bash says who decided", async () => {
    let approvalId = '';
    const remember = async () => {
      approvalId = (await listApprovals(daemon))[0]!.id;
    };
    const { client } = await elicitingClient(t, daemon.url, 'accept', remember);
    const result = await client.callTool({
      name: 'run',
      arguments: { command: 'hive-asked first; echo "first=$?"', env: daemon.env, wait_seconds: 30 },
    });
    assert.equal((result.structuredContent as any).stdout_tail, 'hive-asked ran: first\nfirst=0\n');
    const denied = await runShell(t, daemon.url, `hive-bash deny ${approvalId}`);
    assert.equal(denied.code, 1);
    assert.match(
      denied.stderr,
      new RegExp(
        `no exec waits for approval as "${approvalId}": the person asked through the MCP client accepted it at ${ISO}, and that first answer stands`,
      ),
    );
  });
});

test('through the Tasks extension a cancel leaves the exec waiting: tasks/get says working until the operator answers', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const options = { tasks: true, capabilities: ELICITATION };
  const created = await modernResult(
    daemon.url,
    'tools/call',
    { name: 'run', arguments: { command: 'hive-asked task; echo "task=$?"', env: daemon.env, wait_seconds: 0 } },
    options,
  );
  const { taskId } = created;
  const [waiting] = await waitForApprovals(daemon, taskId);
  const asked = await modernResult(daemon.url, 'tasks/get', { taskId }, options);
  assert.equal(asked.status, 'input_required');
  const [key] = Object.keys(asked.inputRequests);
  await modernResult(daemon.url, 'tasks/update', { taskId, inputResponses: { [key!]: { action: 'cancel' } } }, options);
  const after = await modernResult(daemon.url, 'tasks/get', { taskId }, options);
  assert.deepEqual([after.status, after.inputRequests], ['working', undefined], 'the client is not asked again');
  assert.deepEqual(
    (await listApprovals(daemon)).map((exec) => exec.id),
    [waiting!.id],
    'the exec still waits',
  );
  await operatorAnswers(daemon, waiting!.id, 'approve');
  const late = await modernResult(
    daemon.url,
    'tasks/update',
    { taskId, inputResponses: { [key!]: { action: 'decline' } } },
    options,
  );
  assert.match(
    late._meta['hive-bash/notes'][0],
    /^Your decline of approval .* came too late .*: the operator approved it/,
  );
  const end = await modernResult(daemon.url, 'tools/call', {
    name: 'status',
    arguments: { id: taskId, wait_seconds: 30 },
  });
  assert.equal(end.structuredContent.stdout_tail, 'hive-asked ran: task\ntask=0\n');
});

test('under a policy the instructions and run and status say what a pending approval looks like', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const discovered = await modernResult(daemon.url, 'server/discover');
  assert.match(
    discovered.instructions,
    /may wait for a person's approval: its task stays running, and the result's notes and policy\.waiting name the command and the `hive-bash approve ID`/,
  );
  assert.match(discovered.instructions, /status with wait_seconds waits through it for the decision and the end/);
  const { tools } = await modernResult(daemon.url, 'tools/list');
  const described = Object.fromEntries(
    tools.map((tool: { name: string; description: string }) => [tool.name, tool.description]),
  );
  assert.match(
    described.run,
    /waits for a person: the result says so in notes, with the `hive-bash approve ID` the user runs; status with wait_seconds waits through it/,
  );
  assert.match(described.status, /A program waiting for approval \(see notes\) does not end the wait/);
});
