// The command policy in force on real tasks, in both containment modes: every exec of every process
// of a task is matched, whatever started it (the command itself, eval, a script, Python's
// subprocess, a setsid'd grandchild); what a rule denies fails with "Permission denied" (126), the
// task's stderr names the rule, status and the todo list the refusal; the rest runs.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startHarnessPeer } from '../helpers/harness-peer.js';
import { connectClient } from '../helpers/mcp-client.js';
import { nativeContainment } from '../helpers/daemon.js';
import { startPolicyDaemon, waitForApprovals } from './policy-daemon.js';

const FORCE = 'hive-guarded push --force origin main';
/** Each way a task may come to exec the denied program, each telling its outcome on stdout. */
const COMMAND = [
  `${FORCE}; echo "direct=$?"`,
  `CMD='${FORCE}'; eval "$CMD"; echo "eval=$?"`,
  `sh ./push.sh; echo "script=$?"`,
  `python3 -c 'import subprocess
try: subprocess.run(["hive-guarded", "push", "--force", "python"])
except PermissionError as error: print("python=refused", error.errno)'`,
  `setsid -w sh -c 'hive-guarded push --force setsid; echo "setsid=$?"'`,
  // A copy in a mount of the task's own, which the shim does not see (a bind: under a policy no task mounts a filesystem).
  `mkdir mnt src; unshare -m sh -c 'mount --bind src mnt && cp hive-guarded mnt/ && "$PWD"/mnt/hive-guarded push --force mounted; echo "mounted=$?"'`,
  `hive-guarded status; echo "status=$?"`,
  `hive-guarded push origin main; echo "push=$?"`,
  `hive-guarded push --forced; echo "forced=$?"`,
].join('\n');

for (const containment of ['cgroup', nativeContainment() === 'cgroup' ? 'process-group' : null] as const) {
  if (containment === null) continue;
  test(`a denied program is refused however the task comes to exec it, and the rest runs (${containment})`, async (t) => {
    const peer = await startHarnessPeer(t);
    const daemon = await startPolicyDaemon(t, { containment, args: ['--agent-socket', peer.path] });
    const tools = await connectClient(t, daemon.url);
    writeFileSync(join(daemon.dir, 'push.sh'), `hive-guarded push --force script\n`);
    const started = await tools.ok('run', { command: COMMAND, cwd: daemon.dir, env: daemon.env, wait_seconds: 0 });
    // Peeking leaves the task's todo as the harness has it.
    const ended = (status: { state: string }) => status.state === 'done';
    const view = await tools.statusWhen(started.id, ended, 'the task ended', 60_000, { peek: true });

    assert.equal(
      view.stdout_tail,
      [
        'direct=126',
        'eval=126',
        'script=126',
        'python=refused 13',
        'setsid=126',
        'mounted=126',
        'hive-guarded ran: status',
        'status=0',
        'hive-guarded ran: push origin main',
        'push=0',
        'hive-guarded ran: push --forced',
        'forced=0',
        '',
      ].join('\n'),
      'each way to the denied exec is refused with EACCES; what the rule does not say runs',
    );
    const refusals = view.stderr_tail.split('\n').filter((line: string) => line.startsWith('hive-bash policy:'));
    assert.deepEqual(refusals, [
      'hive-bash policy: refused `hive-guarded push --force origin main` by rule 0 (hive-guarded push --force): no force pushes',
      'hive-bash policy: refused `hive-guarded push --force origin main` by rule 0 (hive-guarded push --force): no force pushes',
      'hive-bash policy: refused `hive-guarded push --force script` by rule 0 (hive-guarded push --force): no force pushes',
      'hive-bash policy: refused `hive-guarded push --force python` by rule 0 (hive-guarded push --force): no force pushes',
      'hive-bash policy: refused `hive-guarded push --force setsid` by rule 0 (hive-guarded push --force): no force pushes',
      'hive-bash policy: refused `hive-guarded push --force mounted` by rule 0 (hive-guarded push --force): no force pushes',
    ]);
    assert.equal(view.policy.denied_count, 6);
    assert.deepEqual(
      view.policy.denied.map((denied: { command: string; program: string; rule: number; reason: string }) => [
        denied.command,
        denied.program,
        denied.rule,
        denied.reason,
      ]),
      [
        ...['origin main', 'origin main', 'script', 'python', 'setsid'].map((last) => [
          `hive-guarded push --force ${last}`,
          join(daemon.dir, 'hive-guarded'),
        ]),
        ['hive-guarded push --force mounted', join(daemon.dir, 'mnt', 'hive-guarded')],
      ].map(([command, program]) => [command, program, 0, 'no force pushes']),
    );
    assert.deepEqual(view.policy.waiting, []);
    const todo = await peer.waitForTodo(started.id, (request) => request.state === 'done');
    assert.match(
      todo.body ?? '',
      /^policy denied 6 exec\(s\): `hive-guarded push --force origin main` \(rule 0: no force pushes\);.* `hive-guarded push --force mounted` \(rule 0: no force pushes\)$/m,
    );
  });
}

test('a sandboxed task on a terminal is under the policy and its sandbox both', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const outside = join(daemon.stateDir, '..', `outside-${process.pid}`);
  t.after(() => rmSync(outside, { force: true }));
  const command = [
    'hive-guarded push --force pty; echo "denied=$?"',
    'hive-guarded status; echo "ran=$?"',
    `touch ${outside} 2>/dev/null; echo "outside=$?"`,
  ].join('\n');
  const started = await tools.ok('run', {
    command,
    env: daemon.env,
    pty: true,
    sandbox: { write: [daemon.dir], network: false },
    wait_seconds: 0,
  });
  const view = await tools.statusWhen(started.id, (status) => status.state === 'done', 'the task ended', 60_000);
  const lines = view.stdout_tail.split('\r\n');
  assert.ok(
    lines.includes(
      'hive-bash policy: refused `hive-guarded push --force pty` by rule 0 (hive-guarded push --force): no force pushes',
    ),
    view.stdout_tail,
  );
  assert.deepEqual(
    lines.filter((line: string) => /^(denied|ran|outside)=/.test(line)),
    ['denied=126', 'ran=0', 'outside=1'],
  );
  assert.equal(view.policy.denied_count, 1);
});

// Names that mean "the calling process" (/dev/fd, /dev/stdin, /proc/self, /proc/thread-self) are
// resolved as the task sees them, not as the shim does: each names the denied program here.
const THROUGH_FDS = [
  'exec 3<hive-guarded 5<hive-guarded',
  '/dev/fd/3 push --force fd; echo "fd=$?"',
  '/dev/stdin push --force stdin <hive-guarded; echo "stdin=$?"',
  '/proc/self/fd/3 push --force self; echo "self=$?"',
  '/proc/thread-self/fd/5 push --force thread-self; echo "thread-self=$?"',
  'ln -s /dev/fd/3 link; ./link push --force link; echo "link=$?"',
  '/dev/fd/3 status; echo "status=$?"',
].join('\n');

test('a denied program run through /dev/fd, /dev/stdin, /proc/self or a link to them is refused', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const started = await tools.ok('run', { command: THROUGH_FDS, cwd: daemon.dir, env: daemon.env, wait_seconds: 0 });
  const view = await tools.statusWhen(started.id, (status) => status.state === 'done', 'the task ended', 60_000);
  assert.equal(
    view.stdout_tail,
    'fd=126\nstdin=126\nself=126\nthread-self=126\nlink=126\nhive-guarded ran: status\nstatus=0\n',
  );
  assert.deepEqual(
    view.policy.denied.map((denied: { command: string; rule: number }) => [
      denied.command.split(' ').pop(),
      denied.rule,
    ]),
    ['fd', 'stdin', 'self', 'thread-self', 'link'].map((last) => [last, 0]),
  );
});

test('a program asked about waits for a person when run through /dev/fd', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const command = 'exec 3<hive-asked; /dev/fd/3 fd; echo "fd=$?"';
  const started = await tools.ok('run', { command, cwd: daemon.dir, env: daemon.env, wait_seconds: 0 });
  const waiting = (await waitForApprovals(daemon, started.id))[0]!;
  assert.equal(waiting.rule, 1);
  const answered = await fetch(new URL(`/approvals/${waiting.id}/deny`, daemon.url), { method: 'POST' });
  assert.equal(answered.status, 200);
  const view = await tools.statusWhen(started.id, (status) => status.state === 'done', 'the task ended', 60_000);
  assert.equal(view.stdout_tail, 'fd=126\n');
});
