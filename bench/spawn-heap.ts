// Spawn rate with the daemon's memory inflated to 1 GiB against its rate at its usual size, for
// the native spawner (posix_spawn of the shim) and for Node's child_process (fork), in one run:
// the two sizes alternate over rounds (a daemon of its own each time); rates are medians over the
// rounds, the ratio the median of each round's own.
// Usage: node dist/bench/spawn-heap.js [--tasks N] [--rounds N] [--ballast-mb N]
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  alternateRounds,
  connectClients,
  median,
  roundRatios,
  rssMegabytes,
  runTasks,
  spreadOf,
  startBenchDaemon,
} from './lib.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '300' },
    rounds: { type: 'string', default: '3' },
    'ballast-mb': { type: 'string', default: '1024' },
    clients: { type: 'string', default: '8' },
  },
});
const TASKS = Number(values.tasks);
const BALLAST = fileURLToPath(new URL('./ballast.js', import.meta.url));

async function measure(containment: string, ballastMb: number) {
  const env: Record<string, string> =
    ballastMb > 0 ? { NODE_OPTIONS: `--import=${BALLAST}`, HIVE_BENCH_BALLAST_MB: String(ballastMb) } : {};
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
  const runs = await alternateRounds(Number(values.rounds), {
    small: () => measure(containment, 0),
    big: () => measure(containment, Number(values['ballast-mb'])),
  });
  const rates = (size: 'small' | 'big') => spreadOf(runs[size]!.map((run) => run.rate));
  const rss = (size: 'small' | 'big') => Math.round(median(runs[size]!.map((run) => run.rss)));
  const [small, big] = [rates('small'), rates('big')];
  const ratio = roundRatios(
    runs.big!.map((run) => run.rate),
    runs.small!.map((run) => run.rate),
  );
  rows.push({
    spawner: containment === 'node' ? 'node child_process (fork)' : 'native posix_spawn + shim',
    small_rss_mb: rss('small'),
    small_tasks_per_s: small.median,
    small_range: `${small.min}-${small.max}`,
    big_rss_mb: rss('big'),
    big_tasks_per_s: big.median,
    big_range: `${big.min}-${big.max}`,
    ratio: ratio.median,
    round_ratio_min: ratio.min,
    round_ratio_max: ratio.max,
    failures: [...runs.small!, ...runs.big!].reduce((sum, run) => sum + run.failures, 0),
  });
}
console.table(rows);
console.log(
  JSON.stringify({
    benchmark: 'spawn-heap',
    tasks: TASKS,
    rounds: Number(values.rounds),
    goal: 'native ratio >= 0.9',
    rows,
  }),
);
