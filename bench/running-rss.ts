// The daemon's memory, read from outside (VmRSS in /proc/PID/status): idle just after its start
// (worker threads up), idle once its worker threads stopped for want of work (the threads' share is
// the difference), after a warm-up, with N `sleep`s running (100 and 1,000 by default), idle again
// once the threads stopped; and, on a fresh daemon, over 20,000 short tasks from 16 lean callers
// (read at every tenth, with the main thread's heap from /metrics at both ends). With each count of
// `sleep`s running, read twice: just after the last one started, and at rest, --rest-wait seconds
// later. The floors, in the same run: a bare Node process, and one with as many empty worker threads
// as the daemon has. --idle-wait 0 skips the waits for the threads to stop and for the rest.
// Usage: node dist/bench/running-rss.js [--running 100,1000] [--growth-tasks 20000] [--callers 16] [--idle-wait 75] [--rest-wait 20]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { statelessCaller, openRawSession, rssMegabytes, runRawTasks, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: {
    running: { type: 'string', default: '100,1000' },
    'growth-tasks': { type: 'string', default: '20000' },
    callers: { type: 'string', default: '16' },
    'warm-up': { type: 'string', default: '200' },
    'idle-wait': { type: 'string', default: '75' },
    'rest-wait': { type: 'string', default: '20' },
  },
});
const RUNNING = values.running.split(',').map(Number);
const GROWTH_TASKS = Number(values['growth-tasks']);
const CALLERS = Number(values.callers);
const WARM_UP = Number(values['warm-up']);
const IDLE_WAIT_MS = Number(values['idle-wait']) * 1000;
const REST_WAIT_MS = Number(values['rest-wait']) * 1000;
const mb = (value: number) => Number(value.toFixed(1));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Health {
  tasks: { running: number; pending: number };
  worker_threads: number;
}
const healthOf = async (origin: string) => (await (await fetch(`${origin}/healthz`)).json()) as Health;
const metricsOf = async (origin: string) => (await fetch(`${origin}/metrics`)).text();

/** `total` runs of `echo hello` from `callers` lean callers; `onDone(n)` after each; throws if one failed. */
async function runEchoes(
  call: ReturnType<typeof statelessCaller>,
  total: number,
  callers: number,
  onDone?: (done: number) => void,
): Promise<void> {
  const { failures } = await runRawTasks(call, callers, total, 'echo hello', 'hello\n', {}, onDone);
  if (failures > 0) throw new Error(`${failures} of ${total} runs of echo hello failed`);
}

/** The floor: a bare Node process with `workers` worker threads that do nothing, its RSS once settled. */
async function bareNodeRss(workers: number): Promise<number> {
  const script = `const { Worker } = require('node:worker_threads');
for (let i = 0; i < ${workers}; i++) new Worker('setInterval(() => {}, 1e6)', { eval: true });
setTimeout(() => { process.stdout.write(/VmRSS:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]); process.exit(0); }, 1500);`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  await once(child, 'exit');
  return Number(out) / 1024;
}

interface Row {
  side: string;
  tasks: number;
  rss_mb: number;
  worker_threads: number;
  per_task_kb?: number;
}

/**
 * Idle just after the start, idle once the worker threads stopped for want of work (the daemon's
 * IDLE_STOP_MS; waited for up to --idle-wait), after a warm-up, with each count of `sleep`s running
 * (all killed before the next), just started and at rest (--rest-wait later), and idle again once
 * the threads stopped.
 */
async function measureRunning(): Promise<Row[]> {
  const daemon = await startBenchDaemon(['--max-running', String(Math.max(...RUNNING)), '--kill-grace-ms', '100']);
  const pool = new Pool(daemon.origin, { connections: CALLERS });
  const rows: Row[] = [];
  const row = async (side: string, tasks: number) => {
    await pause(1000);
    const health = await healthOf(daemon.origin);
    rows.push({ side, tasks, rss_mb: mb(rssMegabytes(daemon.pid)), worker_threads: health.worker_threads });
  };
  // /healthz does not keep the threads up (an MCP request does).
  const idleRow = async (side: string) => {
    if (IDLE_WAIT_MS === 0) return;
    const since = Date.now();
    while ((await healthOf(daemon.origin)).worker_threads > 0 && Date.now() < since + IDLE_WAIT_MS) await pause(500);
    await row(`${side}, ${Math.round((Date.now() - since) / 1000)} s later`, 0);
  };
  try {
    await row('idle, just started', 0);
    await idleRow('idle');
    const call = await openRawSession(pool);
    await runEchoes(statelessCaller(pool), WARM_UP, CALLERS);
    await row(`idle, just after ${WARM_UP} tasks`, 0);
    for (const count of RUNNING) {
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const { text } = await call('run', { command: 'sleep 600', wait_seconds: 0 });
        ids.push(JSON.parse(text).result.structuredContent.id);
      }
      const deadline = Date.now() + 120_000;
      while ((await healthOf(daemon.origin)).tasks.running < count && Date.now() < deadline) await pause(200);
      await row(`${count} sleeps running`, count);
      if (IDLE_WAIT_MS > 0) {
        await pause(REST_WAIT_MS);
        await row(`${count} sleeps running, at rest ${REST_WAIT_MS / 1000} s later`, count);
      }
      for (const id of ids) await call('kill', { id, force: true });
      while ((await healthOf(daemon.origin)).tasks.running > 0 && Date.now() < deadline + 60_000) await pause(200);
    }
    await idleRow('idle again after the tasks');
  } finally {
    await pool.close();
    await daemon.stop();
  }
  return rows;
}

/** The daemon's main thread's committed V8 heap and its young generation, read from its /metrics. */
async function mainHeapOf(origin: string): Promise<{ heap_mb: number; new_space_mb: number }> {
  const text = await metricsOf(origin);
  const read = (pattern: RegExp) => mb(Number(pattern.exec(text)?.[1] ?? NaN) / 1048576);
  return {
    heap_mb: read(/^hive_bash_nodejs_heap_size_total_bytes (\S+)$/m),
    new_space_mb: read(/^hive_bash_nodejs_heap_space_size_total_bytes\{space="new"\} (\S+)$/m),
  };
}

interface Growth {
  warm_mb: number;
  tenths_mb: number[];
  tasks_per_s: number;
  /** The main thread's heap after the warm-up and at the end: whether the growth is in it. */
  main_heap: { warm: { heap_mb: number; new_space_mb: number }; end: { heap_mb: number; new_space_mb: number } };
}

/** RSS after a warm-up of 1,000 tasks, then at every tenth of `GROWTH_TASKS` more, on a fresh daemon. */
async function measureGrowth(): Promise<Growth> {
  const daemon = await startBenchDaemon([]);
  const pool = new Pool(daemon.origin, { connections: CALLERS });
  try {
    const call = statelessCaller(pool);
    await runEchoes(call, Math.min(1000, GROWTH_TASKS), CALLERS);
    const warm = rssMegabytes(daemon.pid);
    const warmHeap = await mainHeapOf(daemon.origin);
    const tenths: number[] = [];
    const step = Math.max(1, Math.floor(GROWTH_TASKS / 10));
    const start = process.hrtime.bigint();
    await runEchoes(call, GROWTH_TASKS, CALLERS, (done) => {
      if (done % step === 0 && tenths.length < 10) tenths.push(mb(rssMegabytes(daemon.pid)));
    });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    return {
      warm_mb: mb(warm),
      tenths_mb: tenths,
      tasks_per_s: Math.round(GROWTH_TASKS / seconds),
      main_heap: { warm: warmHeap, end: await mainHeapOf(daemon.origin) },
    };
  } finally {
    await pool.close();
    await daemon.stop();
  }
}

const rows = await measureRunning();
const threads = Math.max(...rows.map((row) => row.worker_threads));
const floors = {
  bare_node_mb: mb(await bareNodeRss(0)),
  [`bare_node_${threads}_workers_mb`]: mb(await bareNodeRss(threads)),
};
const started = rows[0]!;
// The threads' share: idle with them against idle without them, before any task.
const stopped = IDLE_WAIT_MS > 0 && rows[1]!.worker_threads === 0 ? rows[1]! : null;
const warm = rows.find((row) => row.side.startsWith('idle, just after'))!.rss_mb;
for (const row of rows) if (row.tasks > 0) row.per_task_kb = Math.round(((row.rss_mb - warm) * 1024) / row.tasks);
console.table(rows);
const growth = GROWTH_TASKS > 0 ? await measureGrowth() : null;
if (growth)
  console.log(
    `${GROWTH_TASKS} tasks from ${CALLERS} callers (${growth.tasks_per_s}/s): RSS ${growth.warm_mb} MB after a warm-up of ${Math.min(1000, GROWTH_TASKS)}, then at each tenth ${growth.tenths_mb.join(', ')} MB; ` +
      `the main thread's committed heap ${growth.main_heap.warm.heap_mb} to ${growth.main_heap.end.heap_mb} MB, of it the young generation ${growth.main_heap.warm.new_space_mb} to ${growth.main_heap.end.new_space_mb} MB`,
  );
console.log(`floors: ${JSON.stringify(floors)}`);
console.log(
  JSON.stringify({
    benchmark: 'running-rss',
    node: process.version,
    goal: 'idle <= 85 MB, 100 running <= 90 MB, 1,000 running < 150 MB, flat over 20,000 tasks',
    idle_rss_mb: (stopped ?? started).rss_mb,
    worker_threads_share_mb: stopped ? mb(started.rss_mb - stopped.rss_mb) : null,
    rows,
    floors,
    growth,
  }),
);
