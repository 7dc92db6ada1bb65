// Out of its tasks' reach: what an agent's habits (`pkill node`, `killall -9 node`, `pkill -f WORD`,
// `kill -9 -1`, `rm -rf` of the wrong folder, `cat` of a secret) do when a task runs them (those
// that name the daemon aimed at this test's own processes alone). In the
// tasks' own PID and mount namespace the daemon serves throughout, every record and output file it
// had is intact (after a restart too), a sibling task lives through every case but `kill -9 -1`,
// the caller's own shell lives through its `pkill -f`, and the token is never printed. Where the
// namespace cannot be had (a daemon without root), the fallback is reported, not hidden.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { request } from 'undici';
import { nativeContainment, startTestDaemon, type TestContainment, type TestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, killMarkedCommand, waitFor } from '../helpers/processes.js';

/** Runs the daemon as root without CAP_SYS_ADMIN (gone from the bounding set before Node's exec). */
const WITHOUT_SYS_ADMIN = ['setpriv', '--bounding-set', '-sys_admin', '--'];

function makeTokenFile(t: TestContext): { path: string; token: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const token = `tok-${randomUUID()}`;
  const path = join(dir, 'token');
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return { path, token };
}

async function health(daemon: TestDaemon, token: string): Promise<any> {
  const response = await request(`${daemon.origin}/healthz`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(response.statusCode, 200);
  return response.body.json();
}

/** Every output file under the state dir with its contents, and the registry's size. */
function stateFiles(stateDir: string): Map<string, string> {
  const files = new Map<string, string>();
  const outputs = join(stateDir, 'harness', 'bash-tasks');
  for (const name of readdirSync(outputs)) files.set(name, readFileSync(join(outputs, name), 'utf8'));
  files.set('tasks.sqlite', `${statSync(join(stateDir, 'tasks.sqlite')).size} bytes`);
  return files;
}

/** Every output file that was there is there with the same contents (tasks since added their own). */
function assertOutputsKept(stateDir: string, before: Map<string, string>): void {
  const now = stateFiles(stateDir);
  for (const [name, text] of before) if (name !== 'tasks.sqlite') assert.equal(now.get(name), text, `${name} changed`);
  assert.notEqual(now.get('tasks.sqlite'), '0 bytes');
}

/**
 * What a task tries. The habits that name the daemon (`pkill node`, `killall -9 node`, `pkill -f
 * hive-bash-daemon`) are aimed only at processes carrying this test's `marker`, so that a namespace
 * that failed to hide the daemon would end this test's daemon, and no other process of the host.
 */
const ATTACKS = (stateDir: string, tokenFile: string, word: string, marker: string) => [
  ...['node', 'hive-bash-daemo'].flatMap((name) => [
    { name: `pkill ${name}`, command: `${killMarkedCommand('TERM', name, marker, 'name')}; echo survived` },
    { name: `killall -9 ${name}`, command: `${killMarkedCommand('KILL', name, marker, 'name')}; echo survived` },
  ]),
  { name: 'pkill -f of a word in its own command', command: `pkill -f ${word}; echo "pkill: $?"; echo survived` },
  {
    name: "pkill -f of the daemon's name",
    command: `${killMarkedCommand('KILL', 'hive-bash-daemon', marker, 'command line')}; echo survived`,
  },
  {
    name: 'emptying and removing the state dir',
    command: `find ${stateDir} -type f -exec sh -c ': > "$1"' _ {} \\; ; rm -rf ${stateDir}/* ${stateDir}/.[!.]*; ls ${stateDir} >/dev/null && echo survived`,
  },
  { name: 'cat of the token file', command: `cat ${tokenFile}; echo "cat: $?"; echo survived` },
];

async function runAttacks(t: TestContext, containment: TestContainment): Promise<void> {
  const { path: tokenFile, token } = makeTokenFile(t);
  const auth = { authorization: `Bearer ${token}` };
  const daemon = await startTestDaemon(t, { containment, args: ['--auth-token-file', tokenFile] });
  const tools = await connectClient(t, daemon.url, auth);
  const isolation = (await health(daemon, token)).task_isolation;
  assert.equal(
    isolation.namespace.in_force,
    true,
    `the namespace should be in force as root: ${isolation.namespace.reason}`,
  );
  const kept = await tools.ok('run', { name: 'kept', command: 'echo kept-out; echo kept-err >&2', wait_seconds: 30 });
  assert.equal(kept.exit_code, 0);
  const keptStatus = await tools.ok('status', { id: 'kept' });
  const before = stateFiles(daemon.stateDir);
  const sibling = await tools.ok('run', { name: 'sibling', command: 'sleep 600', wait_seconds: 0 });
  const word = `reach-${randomUUID().slice(0, 8)}`;
  for (const attack of ATTACKS(daemon.stateDir, tokenFile, word, `HIVE_TEST_MARK=${daemon.marker}`)) {
    const result = await tools.ok('run', { command: attack.command, wait_seconds: 30 });
    const what = `${attack.name}: ${JSON.stringify(result)}`;
    assert.equal(result.state, 'done', what);
    assert.match(result.stdout_tail, /survived\n$/, what); // its own shell lived through it
    assert.ok(
      !result.stdout_tail.includes(token) && !result.stderr_tail.includes(token),
      `${attack.name} printed the token`,
    );
    assert.equal((await tools.ok('status', { id: 'sibling' })).state, 'running', `the sibling died of ${attack.name}`);
    assert.equal((await health(daemon, token)).ok, true, `after ${attack.name}`);
  }
  await assertKillAllSparesTheDaemon(tools, daemon);
  assert.equal((await tools.ok('status', { id: sibling.id, wait_seconds: 30 })).state, 'done');
  assertOutputsKept(daemon.stateDir, before);
  assert.deepEqual(await tools.ok('status', { id: 'kept' }), keptStatus);
  assert.equal(await daemon.stop(), 0);
  const again = await startTestDaemon(t, {
    containment,
    stateDir: daemon.stateDir,
    args: ['--auth-token-file', tokenFile],
  });
  const afterRestart = await connectClient(t, again.url, auth);
  const restored = await afterRestart.ok('status', { id: 'kept' });
  assert.deepEqual(
    [restored.state, restored.exit_code, restored.stdout_tail, restored.stderr_tail],
    ['done', 0, 'kept-out\n', 'kept-err\n'],
  );
}

/** `kill -9 -1` ends every task (siblings too) but never the daemon, which reports each end. */
async function assertKillAllSparesTheDaemon(tools: ToolClient, daemon: TestDaemon): Promise<void> {
  const result = await tools.ok('run', { command: 'kill -9 -1; sleep 600', wait_seconds: 30 });
  assert.notEqual(result.state, 'running', `${JSON.stringify(result)}\nthe daemon's log:\n${daemon.stderr()}`);
  assert.equal(result.exit_code, null);
  assert.match(result.error, /its shim was killed/);
}

for (const containment of ['cgroup', 'process-group'] as const) {
  test(
    `a task's pkill node, killall -9 node, pkill -f, kill -9 -1, rm -rf of the state dir and cat of the token leave the daemon serving and its records whole (${containment})`,
    { timeout: 180_000 },
    async (t) => {
      await runAttacks(t, containment);
    },
  );
}

test('a task sees its own pid as namespace_pid, the host the pid status gives, and pid 1 is the init', async (t) => {
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const tools = await connectClient(t, daemon.url);
  const result = await tools.ok('run', { command: 'echo $$; ps -o comm= -p 1', wait_seconds: 30 });
  assert.equal(result.stdout_tail, `${result.namespace_pid}\nhive-task-init\n`);
  assert.notEqual(result.pid, result.namespace_pid);
  assert.equal(result.pgid, result.pid);
});

test("a daemon's crash takes every task in its namespace with it, setsid'd and double-forked ones too, and the next start marks them interrupted", async (t) => {
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const tools = await connectClient(t, daemon.url);
  const command = 'setsid sleep 600 & (sleep 600 &); exec sleep 600'; // three processes a task
  const ids: string[] = [];
  for (let i = 0; i < 3; i++)
    ids.push((await tools.ok('run', { command, env: { REACH: daemon.marker }, wait_seconds: 0 })).id);
  const marker = `REACH=${daemon.marker}`;
  assert.ok(
    await waitFor(() => findMarkedProcesses(marker).length === 9, 30_000),
    `all started: ${findMarkedProcesses(marker).length}`,
  );
  await daemon.crash();
  assert.ok(
    await waitFor(() => findMarkedProcesses(marker).length === 0, 30_000),
    `left alive: ${findMarkedProcesses(marker).length}`,
  );
  const again = await startTestDaemon(t, { containment: nativeContainment(), stateDir: daemon.stateDir });
  const after = await connectClient(t, again.url);
  for (const id of ids) assert.equal((await after.ok('status', { id })).state, 'interrupted');
});

test(
  "without CAP_SYS_ADMIN (a container's root) tasks still get their namespace, in a user namespace of the daemon's, its mounts locked and the token hidden",
  { timeout: 120_000 },
  async (t) => {
    const { path: tokenFile, token } = makeTokenFile(t);
    const daemon = await startTestDaemon(t, {
      containment: nativeContainment(),
      wrapper: WITHOUT_SYS_ADMIN,
      args: ['--auth-token-file', tokenFile],
    });
    const tools = await connectClient(t, daemon.url, { authorization: `Bearer ${token}` });
    const { namespace } = (await health(daemon, token)).task_isolation;
    assert.deepEqual([namespace.in_force, namespace.mounts_locked, namespace.own_proc], [true, true, true]);
    const tried = await tools.ok('run', {
      command: `cat ${tokenFile} 2>/dev/null; umount ${daemon.stateDir} 2>/dev/null; touch ${daemon.stateDir}/x 2>/dev/null; kill -9 -1; echo survived`,
      wait_seconds: 30,
    });
    assert.ok(!tried.stdout_tail.includes(token), 'the token is hidden');
    assert.equal((await health(daemon, token)).ok, true);
    assert.ok(!existsSync(join(daemon.stateDir, 'x')), 'the state dir stays read-only to tasks');
  },
);

test(
  'with the namespace off the start says, once each, what no longer holds; its name and a command text in no argv still do',
  { timeout: 120_000 },
  async (t) => {
    const { path: tokenFile, token } = makeTokenFile(t);
    const daemon = await startTestDaemon(t, {
      containment: nativeContainment(),
      args: ['--auth-token-file', tokenFile, '--task-namespace', 'off'],
    });
    const tools = await connectClient(t, daemon.url, { authorization: `Bearer ${token}` });
    const { namespace, process_title } = (await health(daemon, token)).task_isolation;
    assert.deepEqual([namespace.in_force, namespace.reason], [false, 'off by --task-namespace off']);
    assert.equal(process_title, 'hive-bash-daemon');
    assert.match(
      daemon.stderr(),
      /"level":40,[^\n]*"msg":"tasks can reach the daemon: they share its PID and mount namespaces \(off by --task-namespace off\), so they can see and signal it, write its state dir and read its token; /,
    );
    // Without the namespace the token file is the daemon's user's to read, and so its tasks'.
    const read = await tools.ok('run', { command: `cat ${tokenFile}`, wait_seconds: 30 });
    assert.equal(read.stdout_tail, `${token}\n`);
    // Its name and a command text in no argv still hold. (Not `pkill node` here: with the host's
    // processes in reach, it would end the test runner.)
    const word = `reach-${randomUUID().slice(0, 8)}`;
    const found = await tools.ok('run', {
      command: `pgrep -x node; pgrep -x hive-bash-daemo; pkill -f ${word}; echo survived`,
      wait_seconds: 30,
    });
    const pids = found.stdout_tail.split('\n').slice(0, -2).map(Number);
    assert.ok(pids.includes(daemon.child.pid!), `the daemon is found by its own name: ${found.stdout_tail}`);
    assert.equal(
      pids.filter((pid: number) => pid === daemon.child.pid).length,
      1,
      `the daemon is found once, not as node too: ${found.stdout_tail}`,
    );
    assert.match(found.stdout_tail, /survived\n$/);
    assert.equal(found.namespace_pid, null);
    assert.equal((await health(daemon, token)).ok, true);
  },
);

test("the tasks' init killed from outside takes every task with it, the daemon says so and makes a new namespace for the next", async (t) => {
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const tools = await connectClient(t, daemon.url);
  const initPid = async (): Promise<number | null> =>
    ((await (await request(`${daemon.origin}/healthz`)).body.json()) as any).task_isolation.namespace.init_pid;
  const first = await initPid();
  assert.ok(first !== null && first > 0);
  const task = await tools.ok('run', { command: 'sleep 600', wait_seconds: 0 });
  assert.ok(await waitFor(async () => (await tools.ok('status', { id: task.id })).pid !== null, 30_000), 'it started');
  process.kill(first, 'SIGKILL');
  const ended = await tools.ok('status', { id: task.id, wait_seconds: 30 });
  assert.deepEqual(
    [ended.state, ended.error],
    ['done', 'the task ended without reporting its exit (its shim was killed)'],
  );
  const second = await waitFor(
    async () => {
      const pid = await initPid();
      return pid !== null && pid !== first ? pid : null;
    },
    30_000,
    50,
  );
  assert.ok(second !== null, 'a new init');
  assert.match(
    daemon.stderr(),
    new RegExp(
      `"level":50.*the tasks' init \\(pid ${first}\\) died, and every task in its namespace with it: a new namespace is made for the next tasks`,
    ),
  );
  const next = await tools.ok('run', { command: 'ps -o comm= -p 1; echo "$$"', wait_seconds: 30 });
  assert.equal(next.stdout_tail, `hive-task-init\n${next.namespace_pid}\n`, 'the next task runs in the new namespace');
});

test('a task whose shim is killed ends at once, even while a process its shim could not find holds its output open', async (t) => {
  const daemon = await startTestDaemon(t, { containment: 'process-group' });
  const tools = await connectClient(t, daemon.url);
  // The sleep drops the run marker the orphan kill finds processes by (it keeps the test's own),
  // holds stdout and stderr, and outlives the shim that `kill -9 $PPID` ends.
  const command = 'env -i HIVE_TEST_MARK="$HIVE_TEST_MARK" /bin/sleep 600 & kill -9 $PPID; wait';
  const task = await tools.ok('run', { command, wait_seconds: 30 });
  assert.deepEqual(
    [task.state, task.error],
    ['done', 'the task ended without reporting its exit (its shim was killed)'],
    JSON.stringify(task),
  );
});

test("the daemon's stop ends the tasks' init, and with it its namespace, before the daemon exits, without a word of alarm", async (t) => {
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const tools = await connectClient(t, daemon.url);
  const init = ((await (await request(`${daemon.origin}/healthz`)).body.json()) as any).task_isolation.namespace
    .init_pid;
  assert.ok(typeof init === 'number' && existsSync(`/proc/${init}`), `the init runs: ${init}`);
  await tools.ok('run', { command: 'sleep 600', wait_seconds: 0 });
  assert.equal(await daemon.stop(), 0, daemon.stderr());
  // The daemon waited for the init's parent to reap it, which it does once every process inside is gone.
  assert.equal(existsSync(`/proc/${init}`), false, `the init (pid ${init}) is gone once the daemon has exited`);
  assert.doesNotMatch(daemon.stderr(), /hive-task-init:/);
});
