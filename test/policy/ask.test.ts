// An exec that a rule asks about waits, blocked, until a person answers: through the agent's own
// 2026-07-28 client (MRTR during run's wait; the Tasks extension's tasks/get and tasks/update;
// cancel and the first answer's precedence are answers.test.ts's),
// through hive-bash approve and deny from a shell, or not at all (the timeout refuses it). Each
// answer reaches the real exec: accepted, the program runs; refused, it fails with EACCES.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { runShell } from '../cli/cli.js';
import { startHarnessPeer } from '../helpers/harness-peer.js';
import { MODERN_VERSION, modernRequest, modernResult } from '../helpers/modern-client.js';
import { waitFor } from '../helpers/processes.js';
import { startPolicyDaemon, waitForApprovals, type PolicyDaemon } from './policy-daemon.js';

const TWO_ASKS = 'hive-asked first; echo "first=$?"; hive-asked second; echo "second=$?"';
const ANSWERED = 'hive-asked ran: first\nfirst=0\nsecond=126\n';
const ELICITATION = { elicitation: { form: {} } };

/** The form that asks about `command` of task `taskId`, as a client receives it. */
function formOf(daemon: PolicyDaemon, command: string, taskId: string) {
  return {
    mode: 'form',
    message: `Allow \`${command}\`? (rule: a person decides) Task ${taskId} runs ${daemon.dir}/hive-asked; accept runs it, decline refuses it.`,
    requestedSchema: { type: 'object', properties: {} },
  };
}

/** The task's snapshot once it has ended (a status wait waits through its execs' approvals). */
async function endOf(url: string, id: string): Promise<any> {
  const view = await waitFor(async () => {
    const got = await modernResult(url, 'tools/call', { name: 'status', arguments: { id, wait_seconds: 5 } });
    return got.structuredContent.state === 'done' ? got.structuredContent : null;
  }, 60_000);
  assert.ok(view, `task ${id} did not end`);
  return view;
}

const refusedBy = (command: string, why: string) =>
  `hive-bash policy: refused \`${command}\` by rule 1 (hive-asked): ${why}`;

test('execs that ask wait for a person, and each answer reaches the exec', async (t) => {
  const peer = await startHarnessPeer(t);
  const daemon = await startPolicyDaemon(t, { args: ['--agent-socket', peer.path] });
  const url = daemon.url;

  await t.test(
    'a 2026-07-28 client that declared elicitation is asked during run: accept runs, decline refuses',
    async () => {
      const client = new Client(
        { name: 'hive-bash-test-v2', version: '1.0.0' },
        { capabilities: ELICITATION, versionNegotiation: { mode: { pin: MODERN_VERSION } } },
      );
      const forms: unknown[] = [];
      client.setRequestHandler('elicitation/create', (request) => {
        forms.push(request.params);
        return request.params.message.includes('`hive-asked first`')
          ? { action: 'accept', content: {} }
          : { action: 'decline' };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      t.after(() => client.close().catch(() => {}));
      const result = await client.callTool({
        name: 'run',
        arguments: { command: TWO_ASKS, env: daemon.env, wait_seconds: 30 },
      });
      const view = result.structuredContent as any;
      assert.equal(view.state, 'done');
      assert.equal(view.stdout_tail, ANSWERED);
      assert.deepEqual(forms, [
        formOf(daemon, 'hive-asked first', view.id),
        formOf(daemon, 'hive-asked second', view.id),
      ]);
      assert.equal(
        view.stderr_tail.split('\n')[0],
        refusedBy('hive-asked second', 'the person asked through the MCP client declined it'),
      );
      const listed = await modernResult(url, 'tools/call', { name: 'list', arguments: {} });
      assert.deepEqual(
        listed.structuredContent.tasks.map((task: { id: string }) => task.id),
        [view.id],
        'the retries resumed the same task: no second one was started',
      );
    },
  );

  await t.test('the requestState is refused when changed or given with other arguments', async () => {
    const args = { command: 'hive-asked state', env: daemon.env, wait_seconds: 30 };
    const call = (extra: Record<string, unknown>, given = args) =>
      modernRequest(url, 'tools/call', { name: 'run', arguments: given, ...extra }, { capabilities: ELICITATION });
    const first = await call({});
    assert.equal(first.body.result.resultType, 'input_required');
    const { requestState, inputRequests } = first.body.result;
    const [key] = Object.keys(inputRequests);
    const accept = { inputResponses: { [key!]: { action: 'accept', content: {} } } };
    const forged = `${requestState.slice(0, -4)}AAAA`;
    for (const [extra, given] of [
      [{ ...accept, requestState: forged }, args],
      [
        { ...accept, requestState },
        { ...args, wait_seconds: 29 },
      ],
    ] as const) {
      const refused = await call(extra, given);
      assert.equal(refused.body.error?.code, -32602, JSON.stringify(refused.body));
      assert.match(
        refused.body.error.message,
        /^Invalid params: params\.requestState (failed verification|was given for another call)/,
      );
    }
    const resumed = await call({ ...accept, requestState });
    assert.equal(resumed.body.result.structuredContent.stdout_tail, 'hive-asked ran: state\n');
  });

  await t.test('through the Tasks extension: tasks/get is input_required, tasks/update answers', async () => {
    const options = { tasks: true, capabilities: ELICITATION };
    const created = await modernResult(
      url,
      'tools/call',
      { name: 'run', arguments: { command: TWO_ASKS, env: daemon.env, wait_seconds: 0 } },
      options,
    );
    assert.equal(created.resultType, 'task');
    const { taskId } = created;
    const asked = async (command: string) => {
      const task = await waitFor(async () => {
        const got = await modernResult(url, 'tasks/get', { taskId }, options);
        return got.status === 'input_required' ? got : null;
      }, 30_000);
      assert.ok(task, `tasks/get showed no input_required for ${command}`);
      const [[key, request]] = Object.entries(task.inputRequests) as [[string, any]];
      assert.deepEqual(request, { method: 'elicitation/create', params: formOf(daemon, command, taskId) });
      return key;
    };
    const first = await asked('hive-asked first');
    await modernResult(
      url,
      'tasks/update',
      { taskId, inputResponses: { [first]: { action: 'accept', content: {} } } },
      options,
    );
    const second = await asked('hive-asked second');
    assert.notEqual(second, first, 'each exec has a key of its own');
    await modernResult(url, 'tasks/update', { taskId, inputResponses: { [second]: { action: 'decline' } } }, options);
    const done = await waitFor(async () => {
      const got = await modernResult(url, 'tasks/get', { taskId }, options);
      return got.status === 'completed' ? got : null;
    }, 30_000);
    assert.equal(done?.result.structuredContent.stdout_tail, ANSWERED);
  });

  await t.test('hive-bash approve and deny answer from a shell; the harness is told what waits', async () => {
    // A client that cannot be asked (no elicitation) gets the task running, its exec waiting.
    const started = await modernResult(url, 'tools/call', {
      name: 'run',
      arguments: { command: TWO_ASKS, env: daemon.env, wait_seconds: 0 },
    });
    const [first] = await waitForApprovals(daemon, started.structuredContent.id);
    const shown = await modernResult(url, 'tools/call', {
      name: 'status',
      arguments: { id: started.structuredContent.id },
    });
    const view = shown.structuredContent;
    assert.equal(view.state, 'running');
    assert.deepEqual(
      view.policy.waiting.map((exec: { id: string }) => exec.id),
      [first!.id],
      'status shows the exec that waits',
    );
    assert.match(
      view.notes[0],
      new RegExp(
        `^\`hive-asked first\` waits for a person's approval until .*: the user approves it with \`hive-bash approve ${first!.id}\``,
      ),
    );
    assert.match(shown.content[0].text, new RegExp(`^\`hive-asked first\` waits for a person's approval`, 'm'));
    const todo = await peer.waitForTodo(view.id, (request) => (request.body ?? '').includes(first!.id));
    assert.match(
      todo.body!,
      new RegExp(
        `^waiting for approval: \`hive-asked first\` \\(rule 1: a person decides\\); hive-bash approve ${first!.id} or hive-bash deny ${first!.id}$`,
        'm',
      ),
    );
    const approved = await runShell(t, url, `hive-bash approvals; hive-bash approve ${first!.id}`);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(
      approved.stdout,
      new RegExp(`^${first!.id} +${view.id} .* hive-asked first +rule 1: a person decides$`, 'm'),
    );
    assert.match(approved.stdout, new RegExp(`^approved ${first!.id}: hive-asked first \\(task ${view.id}\\)$`, 'm'));
    const [second] = await waitForApprovals(daemon, view.id);
    const denied = await runShell(t, url, `hive-bash deny ${second!.id} && hive-bash deny ${second!.id}`);
    assert.equal(denied.code, 1, 'an exec answered already waits no more');
    assert.match(denied.stderr, new RegExp(`no exec waits for approval as "${second!.id}"`));
    const end = await endOf(url, view.id);
    assert.equal(end.stdout_tail, ANSWERED);
    assert.equal(
      end.stderr_tail.split('\n')[0],
      refusedBy('hive-asked second', 'the operator denied it (hive-bash deny)'),
    );
  });
});

test('an exec no one answers within --policy-ask-timeout is refused', async (t) => {
  const daemon = await startPolicyDaemon(t, { args: ['--policy-ask-timeout', '1'] });
  const started = await modernResult(daemon.url, 'tools/call', {
    name: 'run',
    arguments: { command: 'hive-asked late; echo "late=$?"', env: daemon.env, wait_seconds: 0 },
  });
  const view = await endOf(daemon.url, started.structuredContent.id);
  assert.equal(view.stdout_tail, 'late=126\n');
  assert.equal(view.stderr_tail.split('\n')[0], refusedBy('hive-asked late', 'no one approved it within 1 s'));
  assert.deepEqual(
    view.policy.denied.map((denied: { reason: string }) => denied.reason),
    ['no one approved it within 1 s'],
  );
});
