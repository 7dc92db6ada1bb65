// What an attack by a helper given only the README found, each a test: the tasks' init lent its
// fds (the host's /proc among them) to tasks through /proc/1/fd; a token or policy file given as a
// symlink was hidden as the link, not the file; a task wrote the cgroup tree (freezing or killing
// the daemon's own cgroup, leaving its own so kill missed it, or raising its own limits: at first
// its tasks' folder stayed writable, and a second round used it); tasks shared the host's SysV
// IPC; a flood of execs that ask held the daemon's memory; a run's env held 16 times what it counted.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { cgroup2Mount, cgroupPathOf } from '../../src/process/cgroups.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';
import { listApprovals, startPolicyDaemon } from '../policy/policy-daemon.js';

function scratch(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `hive-bash-${prefix}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("no task may look into the tasks' init's fds, and it holds nothing but /dev/null", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const fds = await tools.ok('run', { command: 'readlink /proc/1/fd/0; echo "readlink=$?"', wait_seconds: 30 });
  assert.equal(fds.stdout_tail, 'readlink=1\n', 'a task is refused');
  const health = (await (await fetch(`${daemon.origin}/healthz`)).json()) as any;
  const init = health.task_isolation.namespace.init_pid as number;
  const held = new Set(readdirSync(`/proc/${init}/fd`).map((fd) => readlinkSync(`/proc/${init}/fd/${fd}`)));
  assert.deepEqual([...held], ['/dev/null']);
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

/** Pids of processes whose command line holds `word`, the test's own mark (no env: a task may clear it). */
function processesNaming(word: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(word);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Perl: clone3(CLONE_INTO_CGROUP) into the folder $ARGV[0]; the child prints its /proc/self/cgroup. */
const CLONE_INTO_CGROUP = [
  'use Fcntl; sysopen(my $d, $ARGV[0], O_RDONLY|O_DIRECTORY) or die;',
  'my $pid = syscall(435, pack("Q11", 0x200000000, 0, 0, 0, 17, 0, 0, 0, 0, 0, fileno($d)), 88);',
  'if ($pid == 0) { open(my $f, "<", "/proc/self/cgroup"); print <$f>; exit 0 } exit($pid < 0)',
].join(' ');

test('a task can write no cgroup, its own neither: it freezes, leaves, escapes and raises nothing', async (t) => {
  const daemon = await startTestDaemon(t);
  if (daemon.cgroupRoot === null) return t.skip('cgroups are not writable here');
  const tools = await connectClient(t, daemon.url);
  const daemonCgroup = join(cgroup2Mount()!, cgroupPathOf(daemon.child.pid!)!);
  const own = (controller: string) =>
    `/sys/fs/cgroup/${controller}$(grep ':${controller}:' /proc/self/cgroup | cut -d: -f3)`;
  const tries = [
    `echo 1 > ${daemonCgroup}/cgroup.freeze`,
    `echo 1 > ${daemon.cgroupRoot}/cgroup.freeze`,
    `echo 0 > ${daemon.cgroupRoot}/cgroup.max.depth`,
    `mkdir ${daemon.cgroupRoot}/escape`,
    `echo $$ > ${cgroup2Mount()}/cgroup.procs`,
    `echo $$ > ${daemon.cgroupRoot}/cgroup.procs`,
    `echo max > ${own('pids')}/pids.max`,
    `echo 4294967296 > ${own('memory')}/memory.limit_in_bytes`,
    // clone3 with CLONE_INTO_CGROUP, which a read-only mount does not stop: its child would start in
    // the host's root cgroup and say so.
    `perl -e '${CLONE_INTO_CGROUP}' ${cgroup2Mount()} | grep -q '^0::'`,
  ];
  const tried = await tools.ok('run', {
    command: tries
      .map((command, i) => `(${command}) 2>/dev/null && echo "${i} done" || echo "${i} refused"`)
      .join('; '),
    memory_limit_mb: 64,
    max_processes: 50,
    wait_seconds: 30,
  });
  assert.equal(tried.stdout_tail, tries.map((_, i) => `${i} refused\n`).join(''), tries.join('\n'));
  assert.equal(readFileSync(join(daemon.cgroupRoot, 'cgroup.freeze'), 'utf8').trim(), '0');
  // The attack: a setsid'd and an env -i'd process moved out of the task's cgroup, then its shim
  // killed. Neither may outlive the task's end.
  const word = `walkout${process.pid}`;
  const escape = (name: string, how: string) =>
    `${how} bash -c 'mkdir -p ${daemon.cgroupRoot}/esc; echo $$ > ${daemon.cgroupRoot}/esc/cgroup.procs; exec -a ${word}${name} sleep 7777' </dev/null >/dev/null 2>&1 &`;
  t.after(() => {
    for (const pid of processesNaming(word)) process.kill(pid, 'SIGKILL');
  });
  const task = await tools.ok('run', {
    command: `${escape('a', 'setsid')} ${escape('b', 'env -i')} until pgrep -f ${word}b >/dev/null; do sleep 0.1; done; kill -9 $PPID`,
    wait_seconds: 30,
  });
  assert.equal(task.state, 'done');
  assert.deepEqual(
    await waitFor(() => (processesNaming(word).length === 0 ? [] : null), 30_000),
    [],
    'nothing escaped',
  );
});

for (const containment of ['cgroup', 'process-group'] as const) {
  test(`a task makes no cgroup namespace, so mounts no cgroup tree of its own (${containment})`, async (t) => {
    const daemon = await startTestDaemon(t, { containment });
    const tools = await connectClient(t, daemon.url);
    // In a cgroup namespace it owned, a new cgroup mount would be rooted at its cgroups and
    // writable: its limits, the daemon's cgroup, the host's v1 trees where tasks sit at the root.
    const mount = 'mount -t tmpfs t /mnt && mkdir /mnt/c && mount -t cgroup2 none /mnt/c && echo mounted';
    const tried = await tools.ok('run', {
      command: [
        `unshare -C -m sh -c '${mount}' 2>/dev/null || echo own-refused`,
        `unshare -U -r -C -m sh -c '${mount}' 2>/dev/null || echo nested-refused`,
        'unshare -m true && echo mount-namespace-kept',
      ].join('; '),
      wait_seconds: 30,
    });
    assert.equal(tried.stdout_tail, 'own-refused\nnested-refused\nmount-namespace-kept\n');
  });
}

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
  // Which of the 320 execs came past the 256th is the scheduler's to say: some task saw the cap.
  const sawCap = async (id: string) => {
    const view = await tools.ok('status', { id });
    return `${view.stdout_tail}${view.stderr_tail}`.includes(
      'too many execs of all tasks wait for approval at once (256)',
    );
  };
  const refused = await waitFor(async () => (await Promise.all(ids.map(sawCap))).some(Boolean), 60_000);
  assert.ok(refused, 'no task saw the cap');
  for (const id of ids) await tools.ok('kill', { id, force: true });
});

test("a run's env of more than 4,096 variables is refused, naming the bound", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const env = Object.fromEntries(Array.from({ length: 4097 }, (_, i) => [`K${i}`, '']));
  const refused = await tools.error('run', { command: 'true', env });
  assert.match(refused, /^Invalid run input: "env" must be an object of at most 4096 variables \(1048576 bytes in all/);
});

test("of the state dir a task sees its output folder alone: not the registry, which holds other runs' environments", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const secret = `secret-${process.pid}-${Date.now()}`;
  await tools.ok('run', { command: 'true', env: { API_TOKEN: secret }, wait_seconds: 30 });
  const looked = await tools.ok('run', {
    command: `ls -A ${daemon.stateDir}; cat ${daemon.stateDir}/tasks.sqlite* 2>/dev/null | grep -c ${secret}; ls ${daemon.stateDir}/harness/bash-tasks | grep -c out`,
    wait_seconds: 30,
  });
  assert.equal(looked.stdout_tail, 'harness\n0\n2\n', JSON.stringify(looked));
});
