// A refused or asked exec's secrets are masked as *** wherever the exec is shown: status's policy,
// the todo body's policy line, the approvals, the daemon's log, and the refusal's line in the
// task's stderr (native/src/exec-mask.h states the rule). The task's command is the client's own.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startHarnessPeer } from '../helpers/harness-peer.js';
import { connectClient } from '../helpers/mcp-client.js';
import { startPolicyDaemon, waitForApprovals } from './policy-daemon.js';

const POLICY = {
  default: 'allow',
  rules: [
    { match: ['curl'], decision: 'deny', reason: 'no calls out' },
    { match: ['hive-asked'], decision: 'ask', reason: 'a person decides' },
  ],
};

/** Each denied exec, and what status shows of it. */
const CASES: Array<[string, string]> = [
  [
    `curl -s -H 'Authorization: Bearer SECRET1' https://example.com/`,
    `curl -s -H 'Authorization: ***' https://example.com/`,
  ],
  [
    `curl --password SECRET2 --token=SECRET3 -H 'x-api-key:SECRET4' https://example.com/`,
    `curl --password '***' '--token=***' -H 'x-api-key:***' https://example.com/`,
  ],
  [
    `curl -u alice:SECRET5 'https://bob:SECRET6@example.com/x?access_token=SECRET7&page=2#top'`,
    `curl -u 'alice:***' 'https://***@example.com/x?access_token=***&page=2#top'`,
  ],
  [
    `curl -d 'client_secret=SECRET8&grant=code' 'https://example.com/?API_KEY=SECRET9#top'`,
    `curl -d 'client_secret=***' 'https://example.com/?API_KEY=***#top'`,
  ],
  [`curl --user alice https://example.com/`, `curl --user alice https://example.com/`],
];

test("a refused or asked exec's secrets are masked in status, the todo, the approvals, the log and its stderr line", async (t) => {
  const peer = await startHarnessPeer(t);
  const daemon = await startPolicyDaemon(t, { policy: POLICY, args: ['--agent-socket', peer.path] });
  const tools = await connectClient(t, daemon.url);
  const command = [...CASES.map(([exec]) => exec), 'hive-asked --password=SECRET10 now; echo "asked=$?"'].join('\n');
  const started = await tools.ok('run', { command, cwd: daemon.dir, env: daemon.env, wait_seconds: 0 });
  const [waiting] = await waitForApprovals(daemon, started.id);
  assert.equal(waiting!.command, "hive-asked '--password=***' now");
  const approvals = await (await fetch(new URL('/approvals', daemon.url))).text();
  const answered = await fetch(new URL(`/approvals/${waiting!.id}/deny`, daemon.url), { method: 'POST' });
  assert.equal(answered.status, 200);
  const view = await tools.statusWhen(started.id, (s) => s.state === 'done', 'the task ended', 60_000, { peek: true });

  assert.deepEqual(
    view.policy.denied.map((denied: { command: string }) => denied.command),
    [...CASES.map(([, shown]) => shown), "hive-asked '--password=***' now"],
  );
  const todo = await peer.waitForTodo(started.id, (request) => request.state === 'done');
  const refusals = view.stderr_tail.split('\n').filter((line: string) => line.startsWith('hive-bash policy:'));
  assert.equal(
    refusals[0],
    "hive-bash policy: refused `curl -s -H 'Authorization: ***' https://example.com/` by rule 0 (curl): no calls out",
  );
  for (const [where, text] of Object.entries({
    policy: JSON.stringify(view.policy),
    todo: (todo.body ?? '')
      .split('\n')
      .filter((line) => line.startsWith('policy'))
      .join('\n'),
    approvals,
    stderr: view.stderr_tail,
    log: daemon
      .stderr()
      .split('\n')
      .filter((line) => line.includes('policy'))
      .join('\n'),
  }))
    assert.doesNotMatch(text, /SECRET/, `no secret in the ${where}`);
});
