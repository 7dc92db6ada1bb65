// How a task's shim starts: a fork of its worker's spawner runs the shim's code, and the task sees
// nothing of that: its leader holds only its stdio, no signal blocked or ignored, and the shim
// shows its own name, command line and environment, as the hive-task-shim executable would. The
// executable itself still works on its own.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { constants as osConstants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Socket } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { readLines } from '../../src/shared/line-reader.js';
import { nativeAddon, SHIM_NAME, SHIM_PATH } from '../../src/process/native.js';
import { trackShim } from '../../src/process/shim-task.js';
import type { SpawnAnswer } from '../../src/process/spawner-client.js';
import { TASK_SHELL_ARGV, type LaunchRequest } from '../../src/process/launched-task.js';
import { SHIM_PROCESS_NAME } from '../../src/process/process-table.js';
import { startTestDaemon, type TestContainment } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

const readText = (pid: number, name: string): string => readFileSync(`/proc/${pid}/${name}`, 'latin1');
const openFds = (pid: number): string[] => readdirSync(`/proc/${pid}/fd`).sort((a, b) => Number(a) - Number(b));
/** A `SigBlk:`-style mask line of /proc/PID/status, as a hex string. */
const maskOf = (pid: number, field: string): string | undefined =>
  new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(readText(pid, 'status'))?.[1];
const parentOf = (pid: number): number =>
  Number(
    readText(pid, 'stat')
      .slice(readText(pid, 'stat').lastIndexOf(')') + 2)
      .split(' ')[1],
  );

for (const containment of ['cgroup', 'process-group'] as TestContainment[]) {
  describe(`containment ${containment}`, () => {
    for (const pty of [false, true]) {
      test(`a task's leader${pty ? ' on a terminal' : ''} holds only its stdio and no blocked or ignored signal, and its shim looks like the shim`, async (t) => {
        const daemon = await startTestDaemon(t, { containment });
        const tools = await connectClient(t, daemon.url);
        const task = await tools.ok('run', {
          command: 'exec sleep 300',
          env: { SHIM_START: daemon.marker },
          pty,
          wait_seconds: 0,
        });
        const leader = (await waitFor(
          async () => (await tools.ok('status', { id: task.id })).pid as number | null,
        )) as number;
        assert.ok(leader > 0, 'the task has started');
        // Its bash holds the command's fd until it has read the command and closed it (TASK_SHELL_ARGV):
        // looked at once it started, a slow machine showed fd 3 still open (CI, Node 24). Once the
        // leader is the command's `sleep`, nothing but its stdio may be left.
        // And sleep's loader opens its libraries as fd 3 for a moment after the exec (seen on a loaded
        // machine): a fd of the spawner's or the shim's would stay, and this wait run out.
        assert.ok(await waitFor(() => readText(leader, 'comm') === 'sleep\n'), 'the leader has run its command');
        await waitFor(() => openFds(leader).length === 3, 10_000);
        assert.deepEqual(openFds(leader), ['0', '1', '2'], 'nothing of the spawner or the shim reaches the task');
        assert.equal(maskOf(leader, 'SigBlk'), '0000000000000000');
        assert.equal(maskOf(leader, 'SigIgn'), '0000000000000000');
        const shim = parentOf(leader);
        assert.equal(readText(shim, 'comm'), `${SHIM_PROCESS_NAME}\n`);
        const argv = readText(shim, 'cmdline').split('\0');
        assert.equal(argv[0], SHIM_NAME);
        assert.deepEqual(argv.slice(-4), [...TASK_SHELL_ARGV, ''], 'the command text is in no command line');
        assert.ok(
          readText(shim, 'environ').split('\0').includes(`SHIM_START=${daemon.marker}`),
          "the shim's environment is the task's",
        );
        // The shim's own: stdio, the channel on 3 and 4, its signalfd; no socket or fd of its
        // spawner's, and neither the command's fd nor the host's /proc once the leader started.
        // Without a terminal, its fds 1 and 2 are the task's output files, and it holds the read
        // ends of the pipes it copies into them (the leader's stdout and stderr).
        const fds = openFds(shim);
        const target = (pid: number, fd: string) => readlinkSync(`/proc/${pid}/fd/${fd}`);
        // In cgroup mode, also its task's cgroup folders, opened outside the tasks' namespace, where
        // every cgroup mount is read-only: the shim joins and kills its cgroup through them.
        assert.deepEqual(fds.slice(0, 5), ['0', '1', '2', '3', '4']);
        const others = fds.slice(5).map((fd) => target(shim, fd).replace(/^pipe:\[\d+\]$/, 'pipe'));
        const folders = others.filter((name) => name.startsWith('/sys/fs/cgroup/'));
        assert.equal(folders.length > 0, containment === 'cgroup', `cgroup folders: ${folders.join(', ')}`);
        for (const folder of folders) assert.match(folder, /\/task-[0-9a-f-]+$/);
        assert.deepEqual(
          others.filter((name) => !folders.includes(name)),
          pty ? ['anon_inode:[signalfd]'] : ['anon_inode:[signalfd]', 'pipe', 'pipe'],
        );
        if (!pty) {
          const status = await tools.ok('status', { id: task.id });
          assert.deepEqual([target(shim, '1'), target(shim, '2')], [status.stdout_path, status.stderr_path]);
          assert.deepEqual(
            [target(leader, '1'), target(leader, '2')],
            fds.map((fd) => target(shim, fd)).filter((name) => name.startsWith('pipe:')),
            "the leader writes the shim's pipes",
          );
        }
        await tools.ok('kill', { id: task.id, force: true });
      });
    }
  });
}

test('the hive-task-shim executable starts its program and reports its start, exit and CPU time', async () => {
  const shim = spawn(SHIM_PATH, [String(process.pid), '-', '/bin/sh', '-c', 'echo out; exit 3'], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  readLines(shim.stdio[4] as Socket, (line) => lines.push(line));
  let stdout = '';
  shim.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => shim.once('close', (exitCode) => resolve(exitCode)));
  assert.equal(code, 0);
  assert.equal(stdout, 'out\n');
  assert.match(lines[0] ?? '', /^start \d+$/);
  assert.deepEqual(lines.slice(1, 2), ['exit 3']);
  assert.match(lines[2] ?? '', /^cpu \d+$/);
  assert.equal(lines.length, 3);
});

/**
 * Runs the shim executable with `-o CAP` on `sh -c SCRIPT`, its stdout a file in a scratch folder
 * and its stderr `stderr` (a path); resolves with its exit code, its status lines and the stdout file.
 */
async function runShimWithOutput(
  t: TestContext,
  cap: number,
  script: string,
  stderr: string | null,
): Promise<{ code: number | null; lines: string[]; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-shim-output-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const stdout = join(dir, 'out');
  const out = openSync(stdout, 'w', 0o600);
  const err = openSync(stderr ?? join(dir, 'err'), 'w', 0o600);
  const shim = spawn(SHIM_PATH, ['-o', String(cap), String(process.pid), '-', '/bin/sh', '-c', script], {
    stdio: ['ignore', out, err, 'pipe', 'pipe'],
  });
  closeSync(out);
  closeSync(err);
  const lines: string[] = [];
  readLines(shim.stdio[4] as Socket, (line) => lines.push(line));
  const code = await new Promise<number | null>((resolve) => shim.once('close', (exitCode) => resolve(exitCode)));
  return { code, lines, stdout };
}

test("with -o, the hive-task-shim executable copies its task's output into the files it was given, keeping the cap and saying why a stream was cut before the end", async (t) => {
  // The cap is 10 bytes: stdout drops 3; stderr's file (/dev/full: every write fails with ENOSPC)
  // takes nothing; a grandchild outlives the leader and writes once it is gone.
  const script = 'printf 0123456789ABC; echo err >&2; (sleep 0.3; printf late >&2) &';
  const { code, lines, stdout } = await runShimWithOutput(t, 10, script, '/dev/full');
  assert.equal(code, 0);
  assert.equal(readFileSync(stdout, 'utf8'), '0123456789');
  assert.match(lines[0] ?? '', /^start \d+$/);
  // What the leader wrote is in the files (or cut) before its end is told.
  assert.deepEqual(
    lines.slice(1, 3).sort(),
    [`truncated stderr write ${osConstants.errno.ENOSPC}`, 'truncated stdout cap'],
    lines.join('\n'),
  );
  assert.deepEqual(lines.slice(3, 5), ['exit 0', 'output 13 8'], 'the late write is counted: the shim waited for it');
  assert.match(lines[5] ?? '', /^cpu \d+$/);
  assert.equal(lines.length, 6);
});

/**
 * A task tracked as trackShim tracks a real shim's, over a socket pair whose other end (`shim`)
 * the test writes the shim's status lines to; `spawned` stands for the spawner's answer.
 */
function trackedOverPair(t: TestContext, runKey: string, spawned: Promise<SpawnAnswer>) {
  const [ours, theirs] = nativeAddon().socketPair();
  const channel = new Socket({ fd: ours, readable: true, writable: true });
  const shim = new Socket({ fd: theirs, readable: true, writable: true });
  t.after(() => {
    shim.destroy();
    channel.destroy();
  });
  channel.on('error', () => {}); // as launch-native.ts has it
  const request = { cwd: '/', stdio: { stdin: 'null' }, cgroups: { v2: null, v1: [] } } as unknown as LaunchRequest;
  const task = trackShim(
    { stdout: null, stderr: null, channel, channelFd: ours, stdin: null },
    spawned,
    { runKey, cgroupDir: null },
    request,
  );
  return { task, channel, shim };
}

test("a task's end is never told before its start, however late the spawner's answer comes", async (t) => {
  let answer!: (value: SpawnAnswer) => void;
  const spawned = new Promise<SpawnAnswer>((resolve) => (answer = resolve));
  const { task, channel, shim } = trackedOverPair(t, 'order', spawned);
  const seen: string[] = [];
  void task.started.then(() => seen.push('started'));
  void task.exit.then(() => seen.push('exit'));
  shim.write('start 4242\nexit 0\n'); // the shim's lines, before its spawner has answered
  // The lines are parsed in the turn that reads them (bytesRead grows there), and what they tell
  // would be told a microtask later: by the next turn of the loop it would be seen.
  await waitFor(() => channel.bytesRead > 0);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(seen, [], 'nothing is told before the answer');
  answer({ pid: 4241 });
  await task.exit;
  assert.deepEqual(seen, ['started', 'exit']);
});

test("a kill written as the shim exits loses nothing the shim said before: the task's end is told", async (t) => {
  const { task, shim } = trackedOverPair(t, 'kill-at-exit', Promise.resolve({ pid: 4241 }));
  // The shim's last lines and its exit (its end closed), all before this side has read any: the
  // kill's write meets a closed peer (EPIPE), as when a force kill's cgroup.kill ended the task.
  shim.write('start 4242\nsignal 9\n');
  shim.destroy();
  task.signal('SIGKILL');
  const exit = await task.exit;
  assert.deepEqual([exit.signal, exit.error], ['SIGKILL', null], JSON.stringify(exit));
});

test('kill lines a shim has not read yet are none of them lost when its socket is full', async (t) => {
  const { task, shim } = trackedOverPair(t, 'full', Promise.resolve({ pid: 4241 }));
  // Far more than a socket's send buffer holds (each line is a buffer of its own there, about
  // 768 bytes of the 208 KiB it may hold by default), all written before the other end reads any.
  const LINES = 5000;
  for (let i = 0; i < LINES; i++) task.signal('SIGKILL');
  let text = '';
  shim.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  assert.ok(await waitFor(() => text.length >= LINES * 7, 30_000), `${text.length / 7} lines of ${LINES} came`);
  assert.equal(text, 'kill 9\n'.repeat(LINES));
});

test(
  'the shim drops a control line too long for its buffer, says so, and goes on taking kills',
  { timeout: 30_000 },
  async (t) => {
    const shim = spawn(SHIM_PATH, [String(process.pid), '-', '/bin/sleep', '600'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    t.after(() => shim.kill('SIGKILL'));
    const lines: string[] = [];
    let stderr = '';
    shim.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const started = new Promise<void>((resolve) =>
      readLines(shim.stdio[4] as Socket, (line) => (lines.push(line), line.startsWith('start') && resolve())),
    );
    await started;
    const control = shim.stdio[3] as Socket;
    control.write(`${'x'.repeat(300)}\nkill 9\n`);
    const code = await new Promise<number | null>((resolve) => shim.once('close', (exitCode) => resolve(exitCode)));
    assert.equal(code, 0);
    assert.deepEqual(lines.slice(1, 3), ['signalled', 'signal 9'], 'the kill after the long line was taken');
    assert.match(stderr, /^hive-task-shim: control line of over 254 bytes without a newline: dropped: /);
  },
);
