// A task's run opens its output files on libuv's thread pool before the launch (creating a file can
// keep the kernel busy for milliseconds, and its thread carries every other task's reports): the
// control messages that come meanwhile wait for the launch and are carried out then. Real runs of
// real bash (through Node's spawn, which needs no spawner), while every thread of the pool is held
// by an open of a FIFO for writing, which waits until the test opens its reading end: the run's
// opens queue behind them, so a message is surely early.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, open, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { MessageChannel } from 'node:worker_threads';
import type { ReportEnvelope } from '../../src/workers/protocol.js';
import { TaskRun } from '../../src/workers/task-run.js';
import { withTimeout } from '../../src/with-timeout.js';
import { killMarkedProcesses, waitFor } from '../helpers/processes.js';
import { testTaskSpec } from '../helpers/task-spec.js';

type Report = ReportEnvelope['message'];

/** libuv's thread pool: its size, as Node reads it at start. */
const POOL_THREADS = Number(process.env.UV_THREADPOOL_SIZE ?? 4);

/**
 * Holds every thread of libuv's pool in an open of a FIFO (in `dir`) for writing; the release
 * opens their reading ends and resolves once every open is done and closed again.
 */
function holdThreadPool(dir: string): () => Promise<void> {
  const fifos = Array.from({ length: POOL_THREADS }, (_, i) => join(dir, `hold-${i}`));
  const opens = fifos.map((fifo) => {
    execFileSync('mkfifo', ['-m', '600', fifo]);
    return new Promise<number>((resolve, reject) =>
      open(fifo, 'w', (error, fd) => (error ? reject(error) : resolve(fd))),
    );
  });
  let released: Promise<void> | null = null;
  return () =>
    (released ??= (async () => {
      const readers = fifos.map((fifo) => openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
      for (const fd of await Promise.all(opens)) closeSync(fd);
      for (const fd of readers) closeSync(fd);
    })());
}

/**
 * A run of `command` while libuv's pool is held, its reports as they come, the run's promise, its
 * stdout file, and the release of the pool (which lets the run's opens go on). At the test's end
 * the pool is released (a run still waiting for it would keep this process alive) and an unfinished
 * run killed.
 */
function startHeldRun(t: TestContext, command: string, options: { interactive?: boolean; stderrIn?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'hive-launch-wait-'));
  const marker = `HIVE_TEST_MARK=launch-wait-${process.pid}-${dir.slice(-6)}`;
  const { port1, port2 } = new MessageChannel();
  const release = holdThreadPool(dir);
  const stdoutPath = join(dir, 'out');
  const [name, value] = marker.split('=') as [string, string];
  const spec = testTaskSpec({
    taskId: 'held',
    runKey: 'held-1',
    command,
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', [name]: value },
    interactive: options.interactive ?? false,
    stdoutPath,
    stderrPath: join(dir, options.stderrIn ?? '', 'err'),
  });

  const reports: Report[] = [];
  port2.on('message', (envelope: ReportEnvelope) => reports.push(envelope.message));
  const run = new TaskRun(spec, port1);
  let finished = false;
  const done = run.run().finally(() => (finished = true));
  t.after(async () => {
    await release();
    if (!finished) run.onControl({ type: 'kill', signal: 'SIGKILL' });
    await withTimeout(done, 10_000, undefined);
    port1.close();
    await killMarkedProcesses(marker);
    rmSync(dir, { recursive: true, force: true });
  });
  const reported = (type: Report['type']) => waitFor(() => reports.find((report) => report.type === type), 10_000);
  return { run, done, reports, reported, release, stdoutPath };
}

test('a kill that comes while the output files are being opened ends the task once it starts', async (t) => {
  const held = startHeldRun(t, 'sleep 300');
  assert.ok(await held.reported('accepted'));
  held.run.onControl({ type: 'kill', signal: 'SIGTERM' });
  await held.release();
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
  await held.release();
  const answer = await held.reported('input-done');
  assert.deepEqual(answer, { type: 'input-done', requestId: 7, pendingBytes: 0, refusal: null });
  const output = () => readFileSync(held.stdoutPath, 'utf8');
  assert.ok(await waitFor(() => output().includes('\n'), 10_000), `read ${JSON.stringify(output())}`);
  assert.equal(output(), 'got:hello\n');
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
  await held.release(); // stdout opens; stderr, in a folder that does not exist, fails
  await held.done;
  await held.reported('released'); // the reports come on a port: after the run's end
  const ended = held.reports.find((report) => report.type === 'ended');
  assert.match(ended?.type === 'ended' ? (ended.error ?? '') : '', /ENOENT.*\/missing\/err/);
  assert.deepEqual(
    held.reports.find((report) => report.type === 'input-done'),
    { type: 'input-done', requestId: 3, pendingBytes: 0, refusal: { code: 'ERR_INPUT_ENDED', detail: null } },
  );
  assert.equal(readdirSync('/proc/self/fd').length, fdsBefore, 'nothing of the run is left open');
});
