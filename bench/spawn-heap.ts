// Spawn rate with the daemon's memory inflated to 1 GiB against its rate at its usual size, for
// the native spawner (posix_spawn of the shim) and for Node's child_process (fork), in one run.
// Usage: node dist/bench/spawn-heap.js [--tasks N] [--ballast-mb N]
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectClients, rssMegabytes, runTasks, startBenchDaemon } from './lib.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '400' }, 'ballast-mb': { type: 'string', default: '1024' }, clients: { type: 'string', default: '8' } } });
const TASKS = Number(values.tasks);
const BALLAST = fileURLToPath(new URL('./ballast.js', import.meta.url));

async function measure(containment: string, ballastMb: number) {
  const env: Record<string, string> = ballastMb > 0 ? { NODE_OPTIONS: `--import=${BALLAST}`, HIVE_BENCH_BALLAST_MB: String(ballastMb) } : {};
  const daemon = await startBenchDaemon(['--containment', containment, '--max-running', '64'], env);
  try {
    const clients = await connectClients(daemon.url, Number(values.clients));
    await runTasks(clients, 20, 'echo warm', 'warm\n');
    const rss = rssMegabytes(daemon.pid);
    const { rate, failures } = await runTasks(clients, TASKS, 'echo hello', 'hello\n');
    await Promise.all(clients.map((client) => client.close()));
    return { rate, rss, failures };
  } finally {
    await daemon.stop();
  }
}

const rows = [];
for (const containment of ['process-group', 'node']) {
  const small = await measure(containment, 0);
  const big = await measure(containment, Number(values['ballast-mb']));
  rows.push({
    spawner: containment === 'node' ? 'node child_process (fork)' : 'native posix_spawn + shim',
    small_rss_mb: Math.round(small.rss),
    small_tasks_per_s: Math.round(small.rate),
    big_rss_mb: Math.round(big.rss),
    big_tasks_per_s: Math.round(big.rate),
    ratio: Number((big.rate / small.rate).toFixed(2)),
    failures: small.failures + big.failures,
  });
}
console.table(rows);
console.log(JSON.stringify({ benchmark: 'spawn-heap', tasks: TASKS, goal: 'native ratio >= 0.9', rows }));
