// The latency of `status` while 200 tasks flood their output, against the same calls with the
// daemon idle, in this run: rounds of idle calls, then calls under a flood started for the round
// and killed after it. Percentiles over all the rounds' calls, and each round's p99.
// Each task writes as fast as it can; the cap keeps 1 MiB per stream.
// Usage: node dist/bench/status-under-flood.js [--tasks N] [--calls N] [--rounds N]
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
const FLOOD_SETTLE_MS = 1000;

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
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      await call('status', { id: probe });
      times.push(performance.now() - start);
    }
    return times;
  };
  const flood = async () => {
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++)
      ids.push((await result('run', { command: 'yes flooding-the-output-as-fast-as-it-can', wait_seconds: 0 })).id);
    await new Promise((resolve) => setTimeout(resolve, FLOOD_SETTLE_MS));
    return ids;
  };
  const idle: number[][] = [];
  const flooded: number[][] = [];
  for (let round = 0; round < ROUNDS; round++) {
    idle.push(await latencies());
    const ids = await flood();
    flooded.push(await latencies());
    for (const id of ids) await call('kill', { id, force: true });
    for (const id of ids) await call('status', { id, wait_seconds: 30, tail_bytes: 0 });
  }
  const row = (name: string, rounds: number[][]) => ({
    condition: name,
    calls: rounds.flat().length,
    median_ms: Number(percentile(rounds.flat(), 0.5).toFixed(2)),
    p99_ms: Number(percentile(rounds.flat(), 0.99).toFixed(2)),
    round_p99_ms: spreadOf(
      rounds.map((times) => percentile(times, 0.99)),
      2,
    ),
  });
  const rows = [row('idle daemon', idle), row(`${TASKS} tasks flooding`, flooded)];
  console.table(
    rows.map(({ round_p99_ms, ...rest }) => ({
      ...rest,
      round_p99_min_ms: round_p99_ms.min,
      round_p99_max_ms: round_p99_ms.max,
    })),
  );
  console.log(JSON.stringify({ benchmark: 'status-under-flood', goal: 'flooded p99 < 20 ms', rounds: ROUNDS, rows }));
} finally {
  await pool.close();
  await daemon.stop();
}
