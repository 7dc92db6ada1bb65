// The latency of `status` while 200 tasks flood their output, against the same calls with the
// daemon idle and with 200 tasks as busy but writing nothing, in this run: rounds of idle calls,
// then calls under a busy load, then under a flood, each load started for its round and killed
// after it. Percentiles over all the rounds' calls, and each round's p99.
//
// The flood's writers cost the CPU of `yes`, as busy tasks do; what the daemon adds is the
// reading and dropping of their output past the cap. So the flood's p99 is read against the busy
// p99 of the same rounds, and beside it the daemon's own delay: how long its main thread waited
// for a CPU per call (the run-queue wait of /proc/PID/schedstat), which its CPU weight above the
// tasks' keeps small whatever the tasks do. The client measuring is an ordinary process and waits
// for a CPU like any other.
// Each task writes as fast as it can; the cap keeps 1 MiB per stream.
// Usage: node dist/bench/status-under-flood.js [--tasks N] [--calls N] [--rounds N]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { openRawSession, percentile, spreadOf, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '200' },
    calls: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '3' },
  },
});
const TASKS = Number(values.tasks);
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const SETTLE_MS = 1000;
const LOADS = {
  idle: null,
  busy: 'yes busy-without-output > /dev/null',
  flooding: 'yes flooding-the-output-as-fast-as-it-can',
} as const;
type Load = keyof typeof LOADS;

/** Nanoseconds the process's main thread has waited on a run queue so far. */
const runQueueWait = (pid: number) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);

const daemon = await startBenchDaemon([
  '--max-running',
  String(TASKS + 10),
  '--max-output-bytes',
  String(1024 * 1024),
  '--kill-grace-ms',
  '100',
]);
const pool = new Pool(daemon.origin, { connections: 4 });
try {
  const call = await openRawSession(pool);
  const result = async (name: string, args: Record<string, unknown>) =>
    JSON.parse((await call(name, args)).text).result.structuredContent;
  const probe = (await result('run', { command: 'echo probe' })).id as string;
  const latencies = async () => {
    const times: number[] = [];
    const waitedBefore = runQueueWait(daemon.pid);
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      await call('status', { id: probe });
      times.push(performance.now() - start);
    }
    return { times, daemonWaitMs: (runQueueWait(daemon.pid) - waitedBefore) / 1e6 };
  };
  const start = async (command: string) => {
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) ids.push((await result('run', { command, wait_seconds: 0 })).id);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    return ids;
  };
  const measured = { idle: [], busy: [], flooding: [] } as Record<Load, { times: number[]; daemonWaitMs: number }[]>;
  for (let round = 0; round < ROUNDS; round++) {
    for (const load of Object.keys(LOADS) as Load[]) {
      const command = LOADS[load];
      const ids = command === null ? [] : await start(command);
      measured[load].push(await latencies());
      for (const id of ids) await call('kill', { id, force: true });
      for (const id of ids) await call('status', { id, wait_seconds: 30, tail_bytes: 0 });
    }
  }
  const row = (load: Load) => {
    const rounds = measured[load];
    const all = rounds.flatMap((round) => round.times);
    return {
      condition: load === 'idle' ? 'idle daemon' : `${TASKS} tasks ${load}`,
      calls: all.length,
      median_ms: Number(percentile(all, 0.5).toFixed(2)),
      p99_ms: Number(percentile(all, 0.99).toFixed(2)),
      round_p99_ms: spreadOf(
        rounds.map((round) => percentile(round.times, 0.99)),
        2,
      ),
      daemon_wait_per_call_ms: Number(
        (rounds.reduce((sum, round) => sum + round.daemonWaitMs, 0) / all.length).toFixed(3),
      ),
    };
  };
  const rows = (Object.keys(LOADS) as Load[]).map(row);
  console.table(
    rows.map(({ round_p99_ms, ...rest }) => ({
      ...rest,
      round_p99_min_ms: round_p99_ms.min,
      round_p99_max_ms: round_p99_ms.max,
    })),
  );
  console.log(
    JSON.stringify({
      benchmark: 'status-under-flood',
      goal: 'flooded p99 within 20% of busy p99; daemon wait per call flooded no more than busy',
      rounds: ROUNDS,
      rows,
    }),
  );
} finally {
  await pool.close();
  await daemon.stop();
}
