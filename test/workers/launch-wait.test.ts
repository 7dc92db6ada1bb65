// A task's run opens its output files on libuv's thread pool before the launch (creating a file can
// keep the kernel busy for milliseconds, and its thread carries every other task's reports): the
// control messages that come meanwhile wait for the launch and are carried out then. Real runs of
// real bash (through Node's spawn, which needs no spawner), whose stdout path is a FIFO: opening it
// for writing waits until the test opens its reading end, so a message is surely early.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readdirSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import { NO_LIMITS } from '../../src/process/limits.js';
import type { ReportEnvelope, TaskSpec } from '../../src/workers/protocol.js';
import { TaskRun } from '../../src/workers/task-run.js';
import { within } from '../../src/within.js';
import { killMarkedProcesses, waitFor } from '../helpers/processes.js';

type Report = ReportEnvelope['message'];

/**
 * A run of `command` whose stdout is a FIFO, its reports as they come, the run's promise, and the
 * FIFO's reading end to open (which lets the run's open go on). At the test's end the reader is
 * opened (a run still waiting for it would keep this process alive) and an unfinished run killed.
 */
function startHeldRun(t: TestContext, command: string, options: { interactive?: boolean; stderrIn?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hive-launch-wait-'));
  const marker = `HIVE_TEST_MARK=launch-wait-${process.pid}-${dir.slice(-6)}`;
  const { port1, port2 } = new MessageChannel();
  const fifo = join(dir, 'out');
  execFileSync('mkfifo', ['-m', '600', fifo]);
  const [name, value] = marker.split('=') as [string, string];
  const spec: TaskSpec = {
    taskId: 'held',
    runKey: 'held-1',
    command,
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', [name]: value },
    stdin: null,
    interactive: options.interactive ?? false,
    terminal: null,
    stdoutPath: fifo,
    stderrPath: join(dir, options.stderrIn ?? '', 'err'),
    maxOutputBytes: 0,
    timeoutMs: null,
    killGraceMs: 5000,
    spawner: 'node',
    namespaceFd: null,
    cpuWeight: { via: 'none', reason: "Node's spawn" },
    sandbox: null,
    cgroups: { v2: null, v1: [] },
    limits: NO_LIMITS,
    policy: null,
  };
  const reports: Report[] = [];
  port2.on('message', (envelope: ReportEnvelope) => reports.push(envelope.message));
  const run = new TaskRun(spec, port1);
  let finished = false;
  const done = run.run().finally(() => (finished = true));
  let reader: number | null = null;
  const openReader = () => (reader ??= openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
  t.after(async () => {
    openReader();
    if (!finished) run.onControl({ type: 'kill', signal: 'SIGKILL' });
    await within(done, 10_000, undefined);
    closeSync(openReader());
    port1.close();
    await killMarkedProcesses(marker);
    rmSync(dir, { recursive: true, force: true });
  });
  const reported = (type: Report['type']) => waitFor(() => reports.find((report) => report.type === type), 10_000);
  return { run, done, reports, reported, openReader };
}

/** What the FIFO holds now ('' when nothing). */
function readNow(fd: number): string {
  const buffer = Buffer.alloc(4096);
  try {
    return buffer.toString('utf8', 0, readSync(fd, buffer, 0, buffer.length, null));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN') return '';
    throw error;
  }
}

test('a kill that comes while the output files are being opened ends the task once it starts', async (t) => {
  const held = startHeldRun(t, 'sleep 300');
  assert.ok(await held.reported('accepted'));
  held.run.onControl({ type: 'kill', signal: 'SIGTERM' });
  held.openReader();
  await held.done;
  await held.reported('released'); // the reports come on a port: after the run's end
  const ended = held.reports.find((report) => report.type === 'ended');
  assert.ok(
    held.reports.some((report) => report.type === 'started'),
    'it started',
  );
  assert.equal(ended?.type === 'ended' && ended.reason, 'killed');
  assert.equal(ended?.type === 'ended' && ended.signal, 'SIGTERM');
  assert.equal(held.reports.at(-1)?.type, 'released');
});

test('input that comes while the output files are being opened is written once the task starts', async (t) => {
  const held = startHeldRun(t, 'read -r line; echo "got:$line"', { interactive: true });
  assert.ok(await held.reported('accepted'));
  held.run.onControl({ type: 'input', requestId: 7, text: 'hello\n', eof: true });
  const reader = held.openReader();
  const answer = await held.reported('input-done');
  assert.deepEqual(answer, { type: 'input-done', requestId: 7, pendingBytes: 0, refusal: null });
  let output = '';
  assert.ok(await waitFor(() => (output += readNow(reader)).includes('\n'), 10_000), `read ${JSON.stringify(output)}`);
  assert.equal(output, 'got:hello\n');
  await held.done;
  await held.reported('released'); // the reports come on a port: after the run's end
  const ended = held.reports.find((report) => report.type === 'ended');
  assert.equal(ended?.type === 'ended' && ended.exitCode, 0);
});

test('a run whose stderr file cannot be opened ends with the error, its stdout closed and early input refused', async (t) => {
  const held = startHeldRun(t, 'true', { stderrIn: 'missing' });
  assert.ok(await held.reported('accepted'));
  held.run.onControl({ type: 'input', requestId: 3, text: 'late\n', eof: false });
  const fdsBefore = readdirSync('/proc/self/fd').length;
  held.openReader(); // stdout opens; then stderr, in a folder that does not exist, fails
  await held.done;
  await held.reported('released'); // the reports come on a port: after the run's end
  const ended = held.reports.find((report) => report.type === 'ended');
  assert.match(ended?.type === 'ended' ? (ended.error ?? '') : '', /ENOENT.*\/missing\/err/);
  assert.deepEqual(
    held.reports.find((report) => report.type === 'input-done'),
    { type: 'input-done', requestId: 3, pendingBytes: 0, refusal: { code: 'ERR_INPUT_ENDED', detail: null } },
  );
  assert.equal(readdirSync('/proc/self/fd').length, fdsBefore + 1, 'only the reader is left open');
});
