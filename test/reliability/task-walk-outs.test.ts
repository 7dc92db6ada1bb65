// What an attack by a helper given only the README found, each a test: the tasks' init lent its
// fds (the host's /proc among them) to tasks through /proc/1/fd; a token or policy file given as a
// symlink was hidden as the link, not the file; a task wrote the cgroup tree (freezing or killing
// the daemon's own cgroup, or leaving its own, so kill missed it); tasks shared the host's SysV
// IPC; a flood of execs that ask held the daemon's memory; a run's env held 16 times what it counted.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { cgroup2Mount, cgroupPathOf } from '../../src/process/cgroups.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';
import { listApprovals, startPolicyDaemon } from '../policy/policy-daemon.js';

function scratch(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `hive-bash-${prefix}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("the tasks' init holds nothing but /dev/null that a task could open through /proc/1/fd", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const fds = await tools.ok('run', {
    command: 'for fd in /proc/1/fd/*; do readlink $fd; done | sort -u',
    wait_seconds: 30,
  });
  assert.equal(fds.stdout_tail, '/dev/null\n');
});

test('a token and a policy file given as symlinks are hidden with the files they lead to', async (t) => {
  const dir = scratch(t, 'linked-secrets');
  const token = `tok-${Date.now()}`;
  const files: string[] = [];
  const links: string[] = [];
  for (const [name, content] of [
    ['token', `${token}\n`],
    ['policy.json', '{"rules": [{"match": ["hive-secret-rule"], "decision": "deny", "reason": "a secret rule"}]}'],
  ] as const) {
    files.push(join(dir, name));
    writeFileSync(files.at(-1)!, content);
    links.push(join(scratch(t, 'link'), name));
    symlinkSync(files.at(-1)!, links.at(-1)!);
  }
  const daemon = await startTestDaemon(t, { args: ['--auth-token-file', links[0]!, '--policy', links[1]!] });
  const tools = await connectClient(t, daemon.url, { authorization: `Bearer ${token}` });
  const paths = [...links, ...files].join(' ');
  const read = await tools.ok('run', { command: `cat ${paths} 2>/dev/null; echo done`, wait_seconds: 30 });
  assert.equal(read.stdout_tail, 'done\n');
});

test("a task can write no cgroup but its tasks' folder, and a process it moves there out of its own still ends with its kill", async (t) => {
  const daemon = await startTestDaemon(t);
  if (daemon.cgroupRoot === null) return t.skip('cgroups are not writable here');
  const tools = await connectClient(t, daemon.url);
  const daemonCgroup = join(cgroup2Mount()!, cgroupPathOf(daemon.child.pid!)!);
  const tried = await tools.ok('run', {
    command: [
      `echo 1 > ${daemonCgroup}/cgroup.freeze 2>/dev/null || echo freeze-refused`,
      `echo $$ > ${cgroup2Mount()}/cgroup.procs 2>/dev/null || echo leave-refused`,
    ].join('; '),
    wait_seconds: 30,
  });
  assert.equal(tried.stdout_tail, 'freeze-refused\nleave-refused\n');
  // Into the tasks' own folder, out of its cgroup: still a descendant of its shim, the subreaper.
  const escaped = await tools.ok('run', {
    command: `(echo $BASHPID > ${daemon.cgroupRoot}/cgroup.procs && exec setsid sleep 7777) & echo moved; sleep 600`,
    wait_for: 'moved',
    wait_seconds: 30,
  });
  await tools.ok('kill', { id: escaped.id, force: true });
  const sleeps = () =>
    findMarkedProcesses(`HIVE_TEST_MARK=${daemon.marker}`).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('7777'),
    );
  assert.deepEqual(await waitFor(() => (sleeps().length === 0 ? [] : null), 30_000), [], 'the moved sleep is gone');
});

test("tasks share none of the host's SysV IPC, and a sandboxed task none of the other tasks'", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const made = await tools.ok('run', {
    command: "ipcmk -M 4096 >/dev/null; tail -n +2 /proc/sysvipc/shm | awk '{print $1}'",
    wait_seconds: 30,
  });
  const key = made.stdout_tail.trim();
  assert.match(key, /^-?\d+$/);
  const hostKeys = readFileSync('/proc/sysvipc/shm', 'latin1')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/)[0]);
  assert.ok(!hostKeys.includes(key), `the task's segment (key ${key}) is not in the host's table`);
  const sandboxed = await tools.ok('run', {
    command: 'tail -n +2 /proc/sysvipc/shm | wc -l',
    sandbox: { write: [scratch(t, 'ipc')], network: false },
    wait_seconds: 30,
  });
  assert.equal(sandboxed.stdout_tail.trim(), '0', "the other tasks' segment is not in a sandboxed task's");
});

test('execs that ask wait 256 at most across tasks, each shown in at most 4,096 characters; the rest are refused at once', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const word = 'a'.repeat(1000);
  const flood = `for i in $(seq 64); do hive-asked ${Array(20).fill(word).join(' ')} 2>&1 & done; wait`;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++)
    ids.push((await tools.ok('run', { command: flood, env: daemon.env, wait_seconds: 0 })).id);
  const waiting = await waitFor(async () => {
    const list = await listApprovals(daemon);
    return list.length === 256 ? list : null;
  }, 60_000);
  assert.ok(waiting, 'the approvals reached the cap');
  assert.ok(
    waiting.every((exec) => exec.command.length <= 4096 + 20),
    'each is cut',
  );
  const refused = await tools.statusWhen(
    ids[4]!,
    (view) =>
      `${view.stdout_tail}${view.stderr_tail}`.includes('too many execs of all tasks wait for approval at once (256)'),
    'the last task saw the cap',
    60_000,
  );
  assert.ok(refused);
  for (const id of ids) await tools.ok('kill', { id, force: true });
});

test("a run's env of more than 4,096 variables is refused, naming the bound", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const env = Object.fromEntries(Array.from({ length: 4097 }, (_, i) => [`K${i}`, '']));
  const refused = await tools.error('run', { command: 'true', env });
  assert.match(refused, /^Invalid run input: "env" must be an object of at most 4096 variables \(1048576 bytes in all/);
});
