// What a task does to the daemon's files. Where the tasks' namespace is in force, the mounts that
// keep the state dir read-only and hide the token, the policy file and the harness's socket are
// locked by the kernel: a root task can neither unmount nor remount them, and a file renamed over
// a hidden one stays hidden. Where a task can write the state dir anyway (here: the tasks share the
// daemon's namespace), what it puts where an output file or the registry was (a FIFO, a symlink, a
// hard link) never holds a call or a start: the daemon reads it as no file and says so.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startHarnessPeer } from '../helpers/harness-peer.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

/** How long an answer may take here before the test calls it held up (a bound of the negative check, not a speed target). */
const ANSWER_BOUND_MS = 20_000;

/** A file of `content` in a folder of its own (which the daemon hides whole). */
function fileInOwnFolder(t: TestContext, name: string, content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-secret-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

/** /healthz's answer, failing the test if it takes longer than the bound. */
async function health(daemon: TestDaemon, headers: Record<string, string> = {}): Promise<any> {
  const response = await fetch(new URL('/healthz', daemon.url), {
    headers,
    signal: AbortSignal.timeout(ANSWER_BOUND_MS),
  });
  return response.json();
}

test("a task can neither unmount nor remount the state dir's read-only view or what hides the daemon's files, and a file renamed over a hidden one stays hidden", async (t) => {
  const token = `tok-${randomUUID()}`;
  const tokenFile = fileInOwnFolder(t, 'token', `${token}\n`);
  const policyFile = fileInOwnFolder(
    t,
    'policy.json',
    '{"rules": [{"match": ["hive-secret-rule"], "decision": "deny", "reason": "a secret rule"}]}',
  );
  const peer = await startHarnessPeer(t);
  const daemon = await startTestDaemon(t, {
    args: ['--auth-token-file', tokenFile, '--policy', policyFile, '--agent-socket', peer.path],
  });
  const auth = { authorization: `Bearer ${token}` };
  const namespace = (await health(daemon, auth)).task_isolation.namespace;
  assert.equal(namespace.mounts_locked, true, JSON.stringify(namespace));
  const tools = await connectClient(t, daemon.url, auth);
  const sd = daemon.stateDir;
  const tokenDir = join(tokenFile, '..');
  const undo = await tools.ok('run', {
    command: [
      `umount ${sd} 2>/dev/null; umount -l ${sd} 2>/dev/null; mount -o remount,rw ${sd} 2>/dev/null`,
      `touch ${sd}/written 2>/dev/null && echo state-dir-written`,
      `umount ${tokenDir} 2>/dev/null; umount -l ${tokenDir} 2>/dev/null; mount -o remount,rw ${tokenDir} 2>/dev/null`,
      `umount ${join(policyFile, '..')} 2>/dev/null; umount ${join(peer.path, '..')} 2>/dev/null; umount /proc 2>/dev/null`,
      `cat ${tokenFile} ${policyFile} 2>/dev/null`,
      `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])' ${peer.path} 2>/dev/null && echo socket-reached`,
      `[ -S ${peer.path} ] && echo socket-seen`,
      'echo done',
    ].join('; '),
    wait_seconds: 30,
  });
  assert.equal(undo.stdout_tail, 'done\n', JSON.stringify(undo));
  // A rename over each hidden file, as sed -i and editors do, then the same reads.
  for (const file of [tokenFile, policyFile]) {
    writeFileSync(`${file}.new`, readFileSync(file));
    renameSync(`${file}.new`, file);
  }
  const again = await tools.ok('run', {
    command: `cat ${tokenFile} ${policyFile} 2>/dev/null; [ -S ${peer.path} ] && echo socket-seen; echo done`,
    wait_seconds: 30,
  });
  assert.equal(again.stdout_tail, 'done\n');
  assert.doesNotMatch(JSON.stringify([undo, again]), new RegExp(token));
});

test('a FIFO, a symlink or a hard link put where an output file was holds no call, no start and no restart, and is shown as replaced', async (t) => {
  const victimDir = mkdtempSync(join(tmpdir(), 'hive-bash-victim-'));
  t.after(() => rmSync(victimDir, { recursive: true, force: true }));
  const victim = join(victimDir, 'victim');
  writeFileSync(victim, 'keep\n');
  // Tasks share the daemon's namespace, so they can write its state dir as a task of a daemon without root can.
  const daemon = await startTestDaemon(t, { args: ['--task-namespace', 'off'] });
  const tools = await connectClient(t, daemon.url);
  const files = join(daemon.stateDir, 'harness', 'bash-tasks');
  const fifo = await tools.ok('run', {
    name: 'fifo',
    command: `O=${files}/$HIVE_BASH_TASK_ID.out; rm $O; mkfifo $O; echo planted >&2; sleep 600`,
    wait_for: 'planted',
    wait_seconds: 30,
  });
  assert.equal(fifo.wait_result, 'matched', JSON.stringify(fifo));
  const status = await tools.ok('status', { id: 'fifo' });
  assert.equal(status.state, 'running');
  assert.equal(status.stdout_truncated, true);
  assert.equal(
    status.stdout_truncated_reason,
    `the output file ${files}/fifo.out is a FIFO (a named pipe), not the file the daemon made: something replaced it, and what is there is not read`,
  );
  assert.equal((await tools.ok('output', { id: 'fifo', tail: 5 })).stdout.text, '');
  assert.equal((await health(daemon)).ok, true);
  // The next runs of these names find a symlink to a file of the host and a hard link to it.
  await tools.ok('run', {
    command: `ln -s ${victim} ${files}/linked.out; ln ${victim} ${files}/hard.out; mkfifo ${files}/piped.err`,
    wait_seconds: 30,
  });
  for (const name of ['linked', 'hard', 'piped']) {
    const run = await tools.ok('run', { name, command: 'echo fresh; echo fresh-err >&2', wait_seconds: 30 });
    assert.deepEqual([run.state, run.stdout_tail, run.stderr_tail], ['done', 'fresh\n', 'fresh-err\n'], name);
  }
  assert.equal(readFileSync(victim, 'utf8'), 'keep\n', "the host's file is unchanged");
  await assertRestartServes(t, daemon, files);
});

/**
 * The daemon killed with the FIFO in place: the next start marks the task interrupted, reading its
 * tails through the FIFO's place. Killed again with its lock file and its registry's WAL replaced
 * by FIFOs: the next start sets the registry aside and serves.
 */
async function assertRestartServes(t: TestContext, daemon: TestDaemon, files: string): Promise<void> {
  await daemon.crash();
  const first = await startTestDaemon(t, { stateDir: daemon.stateDir, args: ['--task-namespace', 'off'] });
  const status = await (await connectClient(t, first.url)).ok('status', { id: 'fifo' });
  assert.deepEqual(
    [status.state, status.stdout_truncated_reason],
    [
      'interrupted',
      `the output file ${files}/fifo.out is a FIFO (a named pipe), not the file the daemon made: something replaced it, and what is there is not read`,
    ],
  );
  await first.crash();
  for (const name of ['daemon.pid', 'tasks.sqlite-wal']) {
    rmSync(join(daemon.stateDir, name), { force: true });
    execFileSync('mkfifo', [join(daemon.stateDir, name)]);
  }
  const second = await startTestDaemon(t, { stateDir: daemon.stateDir, args: ['--task-namespace', 'off'] });
  assert.equal((await health(second)).ok, true);
  const run = await (await connectClient(t, second.url)).ok('run', { command: 'echo after', wait_seconds: 30 });
  assert.equal(run.stdout_tail, 'after\n');
}

test("where tasks share the daemon's namespace, a task's rm -rf of the state dir turns /healthz not ok with the fault, and later runs go on", async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--task-namespace', 'off'] });
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: `rm -rf ${daemon.stateDir}/*`, wait_seconds: 30 });
  const registry = join(daemon.stateDir, 'tasks.sqlite');
  const health = (await (await fetch(new URL('/healthz', daemon.url))).json()) as any;
  assert.equal(health.ok, false);
  assert.equal(
    health.state_dir.fault,
    `the registry ${registry} was removed: the daemon writes to a file no longer there, lost at its next start; restart it to make a new one`,
  );
  // The output folder is made again, so runs go on until the restart the fault asks for.
  await waitFor(() => existsSync(join(daemon.stateDir, 'harness', 'bash-tasks')), 10_000);
  assert.equal((await tools.ok('run', { command: 'echo on', wait_seconds: 30 })).stdout_tail, 'on\n');
});
