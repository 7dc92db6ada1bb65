// Sandboxed tasks, with real processes: writes inside `write` work and outside fail for the leader,
// a child, a setsid'd grandchild and a nohup'd one, while files outside stay as they were and can
// be read; `network: false` cannot reach a listener outside and serves its own loopback; the
// operator's default and floor, over MCP and through hive-bash; a sandboxed task's own terminal;
// a host without Landlock, and a daemon without CAP_SYS_ADMIN, refused.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { request } from 'undici';
import { runCli } from '../cli/cli.js';
import { nativeContainment, startTestDaemon, type TestContainment } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { makeScratchDir } from '../helpers/scratch.js';

/** Each writer tries `inside/NAME` and `outside/NAME`: the leader, a child, a setsid'd and a nohup'd grandchild. */
function writers(inside: string, outside: string): string {
  // Each records its refusal inside (their stderr lines would interleave).
  const both = (name: string) =>
    `touch ${inside}/${name}; touch ${outside}/${name} 2>/dev/null || touch ${inside}/${name}-refused`;
  return [
    both('leader'),
    `bash -c '${both('child')}'`,
    `setsid bash -c '${both('setsid')}; touch ${inside}/setsid-done' & (nohup bash -c '${both('nohup')}; touch ${inside}/nohup-done' &)`,
    `while [ ! -e ${inside}/setsid-done ] || [ ! -e ${inside}/nohup-done ]; do sleep 0.02; done`,
    `cat ${outside}/kept; echo ok > ${outside}/kept; echo "overwrite: $?"`,
  ].join('; ');
}

for (const containment of ['cgroup', 'process-group'] as TestContainment[]) {
  describe(`containment ${containment}`, () => {
    test('a sandboxed task writes only beneath its write dirs, whoever of its processes tries, and reads everywhere', async (t) => {
      const [inside, outside] = [makeScratchDir(t, 'inside'), makeScratchDir(t, 'outside')];
      writeFileSync(join(outside, 'kept'), 'as it was\n');
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const task = await tools.ok('run', {
        command: writers(inside, outside),
        sandbox: { write: [inside] },
        wait_seconds: 30,
      });
      assert.deepEqual(task.sandbox, { write: [inside], network: true });
      assert.match(task.stdout_tail, /^as it was\noverwrite: 1\n$/);
      for (const name of ['leader', 'child', 'setsid', 'nohup']) {
        assert.ok(existsSync(join(inside, name)), `${name} wrote inside`);
        assert.ok(
          !existsSync(join(outside, name)) && existsSync(join(inside, `${name}-refused`)),
          `${name} was refused outside`,
        );
      }
      assert.equal(readFileSync(join(outside, 'kept'), 'utf8'), 'as it was\n');
    });

    test('network false cannot reach a listener outside the task, and serves its own loopback, whose port status shows', async (t) => {
      const outsider = createServer((socket) => socket.on('error', () => {}).end());
      await new Promise<void>((resolve) => outsider.listen(0, '127.0.0.1', resolve));
      t.after(() => outsider.close());
      const { port } = outsider.address() as AddressInfo;
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const reach = `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && echo reached' 2>/dev/null || echo "refused"`;
      assert.equal(
        (await tools.ok('run', { command: reach, wait_seconds: 30 })).stdout_tail,
        'reached\n',
        'unsandboxed, it is reachable',
      );
      assert.equal(
        (await tools.ok('run', { command: reach, sandbox: { network: false }, wait_seconds: 30 })).stdout_tail,
        'refused\n',
      );
      // An unsandboxed task is in the host's network, a sandboxed one has left it; neither may enter
      // pid 1's (the tasks' init's) network: it is no task's to trace.
      const escape = 'readlink /proc/self/ns/net; nsenter --net=/proc/1/ns/net true 2>/dev/null; echo "nsenter: $?"';
      const hostNetwork = readlinkSync('/proc/self/ns/net');
      assert.equal(
        (await tools.ok('run', { command: escape, wait_seconds: 30 })).stdout_tail,
        `${hostNetwork}\nnsenter: 1\n`,
        "unsandboxed, it is in the host's network",
      );
      const sandboxed = await tools.ok('run', { command: escape, sandbox: { network: false }, wait_seconds: 30 });
      assert.notEqual(sandboxed.stdout_tail.split('\n')[0], hostNetwork);
      assert.match(sandboxed.stdout_tail, /\nnsenter: 1\n$/, 'it cannot enter the network it left');
      const server = await tools.ok('run', {
        command: 'python3 -m http.server 0 --bind 127.0.0.1',
        sandbox: { network: false },
        wait_for: 'Serving HTTP',
        wait_seconds: 30,
      });
      const own = Number(/port (\d+)/.exec(server.stdout_tail)![1]);
      const status = await tools.ok('status', { id: server.id, wait_for_port: own, wait_seconds: 30 });
      assert.equal(status.wait_result, 'listening');
      assert.deepEqual(
        status.ports.map((entry: { port: number }) => entry.port),
        [own],
      );
      const inner = await tools.ok('run', {
        command: reach.replaceAll(String(port), String(own)),
        sandbox: { network: false },
        wait_seconds: 30,
      });
      assert.equal(inner.stdout_tail, 'refused\n', 'another sandboxed task has a loopback of its own');
      const same = await tools.ok('run', {
        command: `python3 -c "import urllib.request as r; print(r.urlopen('http://127.0.0.1:${own}/').status)"`,
        sandbox: { network: false },
        wait_seconds: 30,
      });
      assert.notEqual(same.stdout_tail, '200\n', "nor does it share the server's");
      await tools.ok('kill', { id: server.id, force: true });
    });
  });
}

// With limits too: test/limits/limits.test.ts (whose checks of the v1 hierarchies another file's limited task would disturb).
test("a sandboxed task's own terminal works (tty, stty, read -s, a REPL, /dev/tty), new ones come from a devpts of its own, and it is killed", async (t) => {
  const dir = makeScratchDir(t, 'pty');
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const tools = await connectClient(t, daemon.url);
  const ioctls = `import fcntl, errno
for name, request in (("TIOCSTI", 0x5412), ("TIOCLINUX", 0x541C)):
    try: fcntl.ioctl(0, request, b"x"); print(name, "ok")
    except OSError as error: print(name, errno.errorcode[error.errno])`;
  const command = [
    'tty',
    'stty size',
    'echo "pts: $(ls /dev/pts | tr "\\n" " ")"',
    // read -s turns echo off before it prints its prompt: typed once the prompt shows, nothing echoes.
    `read -rs -p $'secret?\\n' secret; echo "secret: \${#secret}" > /dev/tty`,
    `python3 -q -i -c 'print("repl ready")'`,
    `python3 -c 'import os; m, s = os.openpty(); print("opened", os.ttyname(s))'`,
    `python3 -c '${ioctls}'`,
    'echo finished; sleep 600',
  ].join('; ');
  const task = await tools.ok('run', {
    command,
    pty: true,
    interactive: true,
    sandbox: { write: [dir], network: false },
    wait_seconds: 0,
  });
  const waitFor = async (pattern: string) =>
    assert.equal(
      (await tools.ok('status', { id: task.id, wait_for: pattern, wait_seconds: 30 })).wait_result,
      'matched',
      pattern,
    );
  await waitFor('^secret\\?');
  await tools.ok('input', { id: task.id, text: 'hunter2\n' });
  await waitFor('repl ready');
  await tools.ok('input', { id: task.id, text: 'print(6 * 7)\n' });
  await waitFor('^42');
  await tools.ok('input', { id: task.id, text: 'exit()\n' });
  await waitFor('^finished');
  await tools.ok('kill', { id: task.id });
  const ended = await tools.ok('status', { id: task.id, wait_seconds: 30 });
  assert.equal(ended.state, 'killed');
  const lines = ended.stdout_tail.replaceAll('\r', '').split('\n');
  for (const line of [
    '/dev/pts/0',
    '40 120',
    'pts: 0 ptmx ',
    'secret: 7',
    'opened /dev/pts/1',
    'TIOCSTI EPERM',
    'TIOCLINUX EPERM',
  ])
    assert.ok(lines.includes(line), `"${line}" in:\n${ended.stdout_tail}`);
  assert.ok(!ended.stdout_tail.includes('hunter2'), 'read -s did not echo');
});

test('bad sandboxes are refused naming the member, the value and what is accepted', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const cases: Array<[unknown, string]> = [
    [
      { write: ['relative/dir'] },
      'Invalid run input: "sandbox.write[0]" must be an absolute path; got "relative/dir" (string)',
    ],
    [
      { write: '/tmp' },
      'Invalid run input: "sandbox.write" must be an array of at most 64 absolute directory paths; got "/tmp" (string)',
    ],
    [{ network: 'off' }, 'Invalid run input: "sandbox.network" must be true or false; got "off" (string)'],
    [{ read: ['/'] }, 'Invalid run input: unknown field "read" (string) in "sandbox"; it accepts: write, network'],
    [
      { write: ['/no/such/dir'] },
      'Invalid run input: "sandbox.write[0]" must be an existing directory to write in; got "/no/such/dir" (string): no such directory',
    ],
    [
      true,
      'Invalid run input: "sandbox" must be an object {"write": [absolute directories], "network": true or false}, both members optional; got true (boolean)',
    ],
  ];
  for (const [sandbox, message] of cases) {
    const result = await tools.call('run', { command: 'true', sandbox });
    assert.equal(result.isError, true);
    assert.deepEqual(result.structured.error, { code: 'ERR_INVALID_INPUT', message });
  }
});

test("the operator's floor confines runs that give no sandbox and refuses wider ones; the default fills in", async (t) => {
  const [work, elsewhere] = [makeScratchDir(t, 'floor'), makeScratchDir(t, 'elsewhere')];
  const floor = JSON.stringify({ write: [work], network: false });
  const daemon = await startTestDaemon(t, {
    containment: nativeContainment(),
    args: ['--sandbox-floor', floor, '--default-sandbox', JSON.stringify({ write: [work] })],
  });
  const tools = await connectClient(t, daemon.url);
  const given = await tools.ok('run', { command: `touch ${work}/a ${elsewhere}/a`, cwd: work, wait_seconds: 30 });
  assert.deepEqual(
    given.sandbox,
    { write: [work], network: false },
    'the default, with the floor for what it leaves out',
  );
  const named = await tools.ok('run', { command: 'true', sandbox: { network: false }, wait_seconds: 30 });
  assert.deepEqual(
    named.sandbox,
    { write: [work], network: false },
    "a run's own, with the floor for what it leaves out",
  );
  const wider = await tools.call('run', { command: 'true', sandbox: { write: [elsewhere] } });
  assert.equal(wider.structured.error.code, 'ERR_SANDBOX_NOT_ALLOWED');
  assert.equal(
    wider.structured.error.message,
    `Invalid run input: "sandbox" is wider than the operator's floor (--sandbox-floor): it lets the task write in ${elsewhere} ("sandbox.write[0]"), and the floor allows at most: write beneath ${work}; no network; nothing was started: ask for no more than that`,
  );
  const narrower = await tools.ok('run', {
    command: `touch ${work}/b && echo ok`,
    sandbox: { write: [work], network: false },
    wait_seconds: 30,
  });
  assert.equal(narrower.stdout_tail, 'ok\n');
  const health = (await (await request(`${daemon.origin}/healthz`)).body.json()) as {
    sandbox: Record<string, unknown>;
  };
  assert.match(health.sandbox.writes as string, /^Landlock ABI \d+ and read-only mounts$/);
  assert.equal(
    health.sandbox.isolation,
    "a mount namespace and a devpts instance per task, the kernel's interfaces read-only, no device but the null-like ones and its terminals, capabilities dropped, TIOCSTI, TIOCLINUX, the keyrings, io_uring and user namespaces refused",
  );
  assert.deepEqual(
    [health.sandbox.network, health.sandbox.default, health.sandbox.floor],
    ['a network namespace per task', { write: [work] }, { write: [work], network: false }],
  );
  const cli = await runCli(t, daemon.url, [
    'run',
    '--sandbox-write',
    work,
    '--no-network',
    '--wait',
    '30',
    '--',
    `touch ${work}/c && echo cli-ok`,
  ]);
  assert.equal(cli.code, 0, cli.stderr);
  const id = cli.stdout.split('\n')[0]!;
  const status = await runCli(t, daemon.url, ['status', id]);
  assert.match(status.stdout, new RegExp(`sandbox +write beneath ${work}; no network\n`));
  const refused = await runCli(t, daemon.url, ['run', '--sandbox-write', elsewhere, '--', 'true']);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /ERR_SANDBOX_NOT_ALLOWED|wider than the operator's floor/);
});

test('a default sandbox wider than the floor stops the start with exit code 2', async (t) => {
  const [work, elsewhere] = [makeScratchDir(t, 'floor'), makeScratchDir(t, 'elsewhere')];
  const { runDaemonBinary } = await import('../helpers/daemon.js');
  const result = await runDaemonBinary([
    '--port',
    '0',
    '--state-dir',
    makeScratchDir(t, 'state'),
    '--sandbox-floor',
    JSON.stringify({ write: [work] }),
    '--default-sandbox',
    JSON.stringify({ write: [elsewhere] }),
  ]);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    new RegExp(
      `--default-sandbox is wider than the operator's floor \\(--sandbox-floor\\): it lets the task write in ${elsewhere}`,
    ),
  );
});

test('a default sandbox or a floor this host cannot enforce stops the start with exit code 2, as an unenforceable limit default does', async (t) => {
  const { runDaemonBinary } = await import('../helpers/daemon.js');
  const work = makeScratchDir(t, 'unenforceable');
  for (const flag of ['--default-sandbox', '--sandbox-floor']) {
    const args = ['--port', '0', '--state-dir', makeScratchDir(t, 'state'), flag, JSON.stringify({ write: [work] })];
    const result = await runDaemonBinary(args, { HIVE_TEST_NO_LANDLOCK: '1' });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(
      result.stderr.split('\n').at(-2) + '\n',
      `hive-bash-daemon: ${flag} cannot be enforced here (writes cannot be confined: this kernel offers no Landlock (it needs Linux 5.13 with Landlock enabled in the LSM list)); /healthz says what sandboxing this host supports\n`,
    );
  }
});

test('where Landlock is missing a sandbox that confines writes is refused, naming what is missing, never run unconfined', async (t) => {
  const dir = makeScratchDir(t, 'nolandlock');
  const daemon = await startTestDaemon(t, { containment: nativeContainment(), env: { HIVE_TEST_NO_LANDLOCK: '1' } });
  const tools = await connectClient(t, daemon.url);
  const refused = await tools.call('run', {
    command: `touch ${dir}/never`,
    sandbox: { write: [dir] },
    wait_seconds: 5,
  });
  assert.equal(refused.structured.error.code, 'ERR_SANDBOX_UNAVAILABLE');
  assert.match(
    refused.structured.error.message,
    /^"sandbox" cannot be enforced here \(writes cannot be confined: this kernel offers no Landlock/,
  );
  assert.ok(!existsSync(join(dir, 'never')));
  const health = (await (await request(`${daemon.origin}/healthz`)).body.json()) as { sandbox: { writes: string } };
  assert.match(health.sandbox.writes, /^unavailable: this kernel offers no Landlock/);
  const networkOnly = await tools.ok('run', {
    command: 'echo fine',
    sandbox: { write: ['/'], network: false },
    wait_seconds: 30,
  });
  assert.equal(networkOnly.stdout_tail, 'fine\n', 'a sandbox that needs no Landlock still runs');
});

test('a daemon without CAP_SYS_ADMIN sandboxes its tasks in their user namespace; with no namespace it refuses every sandbox, naming what is missing', async (t) => {
  const dir = makeScratchDir(t, 'nosysadmin');
  const wrapper = ['setpriv', '--bounding-set', '-sys_admin', '--'];
  const daemon = await startTestDaemon(t, { containment: nativeContainment(), wrapper });
  const tools = await connectClient(t, daemon.url);
  const confined = await tools.ok('run', {
    command: `touch ${dir}/inside && echo inside; touch ${dir}/../outside-${daemon.marker} 2>/dev/null || echo outside-refused`,
    sandbox: { write: [dir], network: false },
    wait_seconds: 30,
  });
  assert.equal(confined.stdout_tail, 'inside\noutside-refused\n');
  const without = await startTestDaemon(t, {
    containment: nativeContainment(),
    wrapper,
    args: ['--task-namespace', 'off'],
  });
  const refusing = await connectClient(t, without.url);
  const missing =
    "the task cannot be isolated: a mount namespace per task and dropping its capabilities need CAP_SYS_ADMIN and CAP_SETPCAP, which the daemon does not have, nor its tasks: the tasks' namespace, which gives them a user namespace of their own, is not in force (see task_isolation.namespace)";
  for (const sandbox of [{ write: [dir] }, { write: ['/'] }]) {
    const refused = await refusing.call('run', { command: `touch ${dir}/never`, sandbox, wait_seconds: 5 });
    assert.deepEqual(refused.structured.error, {
      code: 'ERR_SANDBOX_UNAVAILABLE',
      message: `"sandbox" cannot be enforced here (${missing}); nothing was started: a task never runs less confined than it asked. /healthz says what sandboxing this host supports`,
    });
  }
  assert.ok(!existsSync(join(dir, 'never')));
  const health = (await (await request(`${without.origin}/healthz`)).body.json()) as {
    sandbox: Record<string, string>;
  };
  const why = missing.replace('the task cannot be isolated: ', '');
  assert.deepEqual([health.sandbox.isolation, health.sandbox.writes], [`unavailable: ${why}`, `unavailable: ${why}`]);
  assert.match(health.sandbox.network!, /^unavailable: a network namespace with its loopback up needs CAP_SYS_ADMIN/);
  assert.match(without.stderr(), /"level":40,[^\n]*"msg":"no run can be sandboxed here: a mount namespace per task/);
});
