// The daemon's RSS with 1,000 tasks running (`sleep`), against its RSS idle, in this run.
// Usage: node dist/bench/running-rss.js [--tasks N]
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { openRawSession, rssMegabytes, startBenchDaemon } from './lib.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '1000' } } });
const TASKS = Number(values.tasks);

const daemon = await startBenchDaemon(['--max-running', String(TASKS), '--kill-grace-ms', '100']);
const pool = new Pool(daemon.origin, { connections: 8 });
try {
  const call = await openRawSession(pool);
  const idle = rssMegabytes(daemon.pid);
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i++)
    ids.push(
      JSON.parse((await call('run', { command: 'sleep 600', wait_seconds: 0 })).text).result.structuredContent.id,
    );
  const deadline = Date.now() + 120_000;
  for (;;) {
    const health = (await (await fetch(`${daemon.origin}/healthz`)).json()) as { tasks: { running: number } };
    if (health.tasks.running >= TASKS || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const running = rssMegabytes(daemon.pid);
  for (const id of ids) await call('kill', { id, force: true });
  const rows = [
    {
      idle_rss_mb: Math.round(idle),
      running_rss_mb: Math.round(running),
      tasks: TASKS,
      per_task_kb: Math.round(((running - idle) * 1024) / TASKS),
    },
  ];
  console.table(rows);
  console.log(JSON.stringify({ benchmark: 'running-rss', goal: 'running_rss_mb < 150', rows }));
} finally {
  await pool.close();
  await daemon.stop();
}
