// The latency of `status` while 200 tasks flood their output, against the same calls with the
// daemon idle, in this run. Each task writes as fast as it can; the cap keeps 1 MiB per stream.
// Usage: node dist/bench/status-under-flood.js [--tasks N] [--calls N]
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { openRawSession, percentile, startBenchDaemon } from './lib.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '200' }, calls: { type: 'string', default: '500' } } });
const TASKS = Number(values.tasks);
const CALLS = Number(values.calls);

const daemon = await startBenchDaemon(['--max-running', String(TASKS + 10), '--max-output-bytes', String(1024 * 1024), '--kill-grace-ms', '100']);
const pool = new Pool(daemon.origin, { connections: 4 });
try {
  const call = await openRawSession(pool);
  const probe = JSON.parse((await call('run', { command: 'echo probe' })).text).result.structuredContent.id as string;
  const latencies = async () => {
    const times: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const start = performance.now();
      await call('status', { id: probe });
      times.push(performance.now() - start);
    }
    return times;
  };
  const idle = await latencies();
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++) ids.push(JSON.parse((await call('run', { command: 'yes flooding-the-output-as-fast-as-it-can', wait_seconds: 0 })).text).result.structuredContent.id);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const flooded = await latencies();
  for (const id of ids) await call('kill', { id, force: true });
  const row = (name: string, times: number[]) => ({ condition: name, median_ms: Number(percentile(times, 0.5).toFixed(2)), p99_ms: Number(percentile(times, 0.99).toFixed(2)) });
  const rows = [row('idle daemon', idle), row(`${TASKS} tasks flooding`, flooded)];
  console.table(rows);
  console.log(JSON.stringify({ benchmark: 'status-under-flood', goal: 'flooded p99 < 20 ms', rows }));
} finally {
  await pool.close();
  await daemon.stop();
}
