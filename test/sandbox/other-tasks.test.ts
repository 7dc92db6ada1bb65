// What a sandboxed task may do to processes outside its sandbox: nothing a tracer does. Every
// sandbox, write ["/"] too, is a Landlock domain of its own, so no sandboxed task can ptrace,
// pidfd_getfd, process_vm_readv/writev, open /proc/PID/mem or read /proc/PID/environ and
// /proc/PID/fd of another task's processes (sandboxed or not), nor signal them or connect to an
// abstract unix socket made outside its sandbox (Landlock's scopes, ABI 6); its own children it
// still traces and signals, and its own abstract sockets it reaches.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { REPO_ROOT } from '../helpers/nix-module.js';
import { runDone } from '../helpers/run-done.js';
import { makeScratchDir } from '../helpers/scratch.js';

/** other-processes.c built in a scratch directory of `t`'s. */
function buildProbe(t: TestContext): { program: string; work: string } {
  const work = makeScratchDir(t, 'other-tasks');
  const program = join(work, 'other-processes');
  execFileSync('cc', ['-O2', '-o', program, join(REPO_ROOT, 'test/sandbox/fixtures/other-processes.c')]);
  return { program, work };
}

/** A task that holds /etc/hostname open as fd 7 and sleeps: its pid in the tasks' namespace. */
async function startVictim(tools: ToolClient, sandbox: object | undefined): Promise<number> {
  const victim = await tools.ok('run', {
    command: 'exec 7</etc/hostname; echo "ready $$"; exec sleep 600',
    env: { HIVE_VICTIM_SECRET: 'secret' },
    wait_for: 'ready',
    wait_seconds: 30,
    ...(sandbox === undefined ? {} : { sandbox }),
  });
  return Number(/ready (\d+)/.exec(victim.stdout_tail)![1]);
}

/** other-processes' lines as "CALL" -> "ok" or the errno's name. */
const outcomes = (stdout: string) =>
  new Map(
    stdout
      .trim()
      .split('\n')
      .map((line) => line.split(' ') as [string, string]),
  );

test("no sandboxed task traces, takes fds from, reads or signals another task's processes; its own children it does", async (t) => {
  const { program, work } = buildProbe(t);
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const victims = {
    'write / network': await startVictim(tools, { write: ['/'], network: true }),
    'write dir network': await startVictim(tools, { write: [work], network: true }),
    unsandboxed: await startVictim(tools, undefined),
  };
  const none = `hive-none-${randomUUID()}`;
  for (const sandbox of [
    { write: ['/'], network: false },
    { write: [work], network: false },
    { write: ['/'], network: true },
  ]) {
    for (const [name, pid] of Object.entries(victims)) {
      const task = await runDone(tools, { command: `${program} ${pid} 7 ${none}`, sandbox });
      const reached = [...outcomes(task.stdout_tail)].filter(([, outcome]) => outcome === 'ok');
      assert.deepEqual(reached, [], `${JSON.stringify(sandbox)} against ${name}: ${task.stdout_tail}`);
    }
    const own = await runDone(tools, { command: `sleep 600 & ${program} $! 1 ${none}; kill $!`, sandbox });
    assert.deepEqual(
      [...outcomes(own.stdout_tail)],
      [
        ...['ptrace', 'pidfd_getfd', 'process_vm_readv', 'process_vm_writev', 'open-mem', 'read-environ'].map(
          (call) => [call, 'ok'],
        ),
        ['readlink-fd', 'ok'],
        ['kill', 'ok'],
        ['connect-abstract', 'ECONNREFUSED'],
      ],
      `${JSON.stringify(sandbox)} against its own child`,
    );
  }
});

test("a sandboxed task reaches no abstract unix socket made outside its sandbox (another task's), its own it does", async (t) => {
  const { program } = buildProbe(t);
  const name = `hive-test-${randomUUID()}`;
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const listen = (socket: string) =>
    `python3 -c 'import socket, time; s = socket.socket(socket.AF_UNIX); s.bind("\\0${socket}"); s.listen(); print("listening", flush=True); time.sleep(600)'`;
  await tools.ok('run', { command: listen(name), wait_for: 'listening', wait_seconds: 30 });
  const reach = `${program} 1 0 ${name} | grep connect-abstract`;
  const unsandboxed = await runDone(tools, { command: reach });
  assert.equal(unsandboxed.stdout_tail, 'connect-abstract ok\n', 'the socket is there to reach');
  // The task's own socket, listening while the probe runs as its child.
  const own = `python3 -c 'import socket, subprocess; s = socket.socket(socket.AF_UNIX); s.bind("\\0own-${name}"); s.listen(); subprocess.run(["${program}", "1", "0", "own-${name}"])' | grep connect-abstract`;
  for (const write of [['/'], ['/tmp']]) {
    const task = await runDone(tools, { command: `${reach}; ${own}`, sandbox: { write, network: true } });
    assert.equal(task.stdout_tail, 'connect-abstract EPERM\nconnect-abstract ok\n', JSON.stringify(write));
  }
});
