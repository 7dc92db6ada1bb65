// The pending queue is bounded in the bytes its runs hold, not only in their count: with every slot
// busy, runs of 1 MiB of stdin are queued until they would pass --max-pending-bytes, and the next is
// refused with ERR_QUEUE_FULL, naming the bound and what is held, nothing of it kept. A pending run
// killed gives its bytes back. Full size (HIVE_BATTERY_FULL=1) tries as many runs as ran the
// daemon out of its heap before the bound.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { MAX_INPUT_BYTES } from '../../src/supervisor/mcp/shared-fields.js';
import { batterySize, healthz, processFigures, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { latencyFigures } from '../helpers/stall.js';

/** The bound the test daemon is given: 16 runs of 1 MiB of stdin, and a little. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024 + 4096;
/** Runs tried, each with 1 MiB of stdin: past the bound by far (on a daemon without it, 4,000 ended in a heap-limit crash). */
const RUNS = batterySize(40, 4000);
/** Runs of 1 MiB per POST: a body holds at most 4 MiB. */
const PER_POST = 3;

test('pending runs past --max-pending-bytes are refused with ERR_QUEUE_FULL', { timeout: 600_000 }, async (t) => {
  const daemon = await startTestDaemon(t, {
    args: ['--max-running', '1'],
    env: { HIVE_BASH_MAX_PENDING_BYTES: String(MAX_PENDING_BYTES) },
  });
  const session = await RawSession.open(daemon.url);
  await session.all('run', [{ command: 'sleep 600', name: 'slot', wait_seconds: 0 }]);
  const before = processFigures(daemon.child.pid!).rssKb;
  const stdin = 'y'.repeat(MAX_INPUT_BYTES);
  const run = { command: 'cat >/dev/null', stdin, wait_seconds: 0 };
  const refusals: string[] = [];
  const latencies: number[] = [];
  let peakKb = before;
  for (let sent = 0; sent < RUNS; sent += PER_POST) {
    const answers = await session.batch(
      'run',
      Array.from({ length: Math.min(PER_POST, RUNS - sent) }, () => run),
    );
    for (const answer of answers) if (answer.isError) refusals.push(answer.structured.error);
    peakKb = Math.max(peakKb, processFigures(daemon.child.pid!).rssKb);
    const asked = performance.now();
    await healthz(daemon.origin);
    latencies.push(performance.now() - asked);
  }
  const queued = (await healthz(daemon.origin)).tasks.pending;
  const health = latencyFigures(latencies);
  report(t, {
    runs: RUNS,
    queued,
    refused: refusals.length,
    rss_before_kb: before,
    rss_peak_kb: peakKb,
    healthz_ms: health,
  });
  assert.ok(refusals.length > 0, `all ${RUNS} runs of ${MAX_INPUT_BYTES} bytes of stdin were queued`);
  assert.equal(queued + refusals.length, RUNS);

  // Each run holds its stdin, its command and its cwd: 16 of them fit, the 17th does not.
  const bytes = MAX_INPUT_BYTES + 'cat >/dev/null'.length + Buffer.byteLength(process.cwd());
  assert.equal(queued, Math.floor(MAX_PENDING_BYTES / bytes));
  const message = `the pending queue is full: its ${queued} tasks hold ${queued * bytes} bytes of command, stdin, cwd, name, env and sandbox folders, and this run's ${bytes} would pass --max-pending-bytes ${MAX_PENDING_BYTES}; nothing was started: wait for tasks to finish or kill some, then call run again`;
  assert.deepEqual(refusals[0], { code: 'ERR_QUEUE_FULL', message });

  // A pending run cancelled gives its bytes back: the next run is queued.
  const [pending] = (await session.batch('list', [{ state: 'pending', limit: 1 }]))[0]!.structured.tasks;
  await session.all('kill', [{ id: pending.id }]);
  const [again] = await session.batch('run', [run]);
  assert.equal(again!.isError, false, again!.text);
  assert.equal(again!.structured.state, 'pending');
  await session.all('kill', [{ id: 'slot', force: true }]);
});

test("a pending run's sandbox folders count in --max-pending-bytes", async (t) => {
  const daemon = await startTestDaemon(t, {
    args: ['--max-running', '1'],
    env: { HIVE_BASH_MAX_PENDING_BYTES: String(4 * 1024 * 1024) },
  });
  const session = await RawSession.open(daemon.url);
  await session.all('run', [{ command: 'sleep 600', name: 'slot', wait_seconds: 0 }]);
  // 64 folders of 4,084 characters (/tmp, then /. again and again): 256 KiB as asked, as much resolved.
  const sandbox = { write: Array.from({ length: 64 }, () => `/tmp${'/.'.repeat(2040)}`) };
  const answers = await session.batch(
    'run',
    Array.from({ length: 12 }, () => ({ command: 'true', sandbox, wait_seconds: 0 })),
  );
  const refused = answers.filter((answer) => answer.isError).map((answer) => answer.structured.error.code);
  // Each counts 522,752 bytes of folders and a few more: 8 fit in 4 MiB, the 9th would pass it.
  assert.deepEqual(refused, ['ERR_QUEUE_FULL', 'ERR_QUEUE_FULL', 'ERR_QUEUE_FULL', 'ERR_QUEUE_FULL']);
  await session.all('kill', [{ id: 'slot', force: true }]);
});
