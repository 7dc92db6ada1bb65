// npm run bench: runs each benchmark in a process of its own, prints one table and writes the
// figures as JSON to bench/results/latest.json. --quick runs each one small, one round each.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, only: { type: 'string' } } });
const QUICK = values.quick;

interface Benchmark {
  name: string;
  script: string;
  args: string[];
  quickArgs: string[];
}

const BENCHMARKS: Benchmark[] = [
  { name: 'short-tasks', script: 'short-tasks.js', args: [], quickArgs: ['--tasks', '40', '--rounds', '1'] },
  {
    name: 'spawn-heap',
    script: 'spawn-heap.js',
    args: [],
    quickArgs: ['--tasks', '30', '--rounds', '1', '--ballast-mb', '128', '--clients', '4'],
  },
  { name: 'status-rate', script: 'status-rate.js', args: [], quickArgs: ['--calls', '400', '--rounds', '1'] },
  {
    name: 'list-size',
    script: 'list-size.js',
    args: [],
    quickArgs: ['--tasks', '100', '--running', '5', '--calls', '20'],
  },
  { name: 'kill-storm', script: 'kill-storm.js', args: [], quickArgs: ['--processes', '100', '--rounds', '1'] },
  {
    name: 'output-rate',
    script: 'output-rate.js',
    args: [],
    quickArgs: ['--mib', '32', '--rounds', '1', '--keep-busy-rounds'],
  },
  {
    name: 'running-rss',
    script: 'running-rss.js',
    args: [],
    quickArgs: ['--running', '20', '--growth-tasks', '100', '--warm-up', '50', '--idle-wait', '0'],
  },
  {
    name: 'status-under-flood',
    script: 'status-under-flood.js',
    args: [],
    quickArgs: ['--tasks', '10', '--calls', '50', '--rounds', '1'],
  },
  { name: 'registry-size', script: 'registry-size.js', args: [], quickArgs: ['--sizes', '10,1000', '--tasks', '30'] },
  { name: 'mcp-modes', script: 'mcp-modes.js', args: [], quickArgs: ['--calls', '400', '--rounds', '1'] },
  {
    name: 'todo-latency',
    script: 'todo-latency.js',
    args: [],
    quickArgs: ['--tasks', '50'],
  },
  { name: 'output-grep', script: 'output-grep.js', args: [], quickArgs: ['--mib', '16', '--rounds', '1'] },
  { name: 'screen-cost', script: 'screen-cost.js', args: [], quickArgs: ['--tasks', '5', '--feed-mib', '1'] },
  { name: 'exec-policy', script: 'exec-policy.js', args: [], quickArgs: ['--execs', '100', '--rounds', '1'] },
];

/** Runs one benchmark; its figures are the last line of its stdout that parses as JSON. */
function runBenchmark(benchmark: Benchmark): { name: string; ok: boolean; seconds: number; figures: unknown } {
  const started = Date.now();
  const script = fileURLToPath(new URL(`./${benchmark.script}`, import.meta.url));
  const result = spawnSync(process.execPath, [script, ...(QUICK ? benchmark.quickArgs : benchmark.args)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 10 * 60_000,
  });
  process.stdout.write(result.stdout ?? '');
  let figures: unknown = null;
  for (const line of (result.stdout ?? '').trim().split('\n').reverse()) {
    try {
      figures = JSON.parse(line);
      break;
    } catch {
      // a table line
    }
  }
  return {
    name: benchmark.name,
    ok: result.status === 0 && figures !== null,
    seconds: (Date.now() - started) / 1000,
    figures,
  };
}

const machine = {
  cpus: cpus().length,
  cpu_model: cpus()[0]?.model ?? 'unknown',
  memory_gib: Math.round(totalmem() / 2 ** 30),
  node: process.version,
  load_average_before: loadavg().map((value) => Number(value.toFixed(2))),
};
const selected = BENCHMARKS.filter(
  (benchmark) => values.only === undefined || values.only.split(',').includes(benchmark.name),
);
const results = selected.map(runBenchmark);
console.table(results.map(({ name, ok, seconds }) => ({ name, ok, seconds: Number(seconds.toFixed(1)) })));
const outDir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
mkdirSync(outDir, { recursive: true });
writeFileSync(
  `${outDir}latest${QUICK ? '-quick' : ''}.json`,
  `${JSON.stringify({ date: new Date().toISOString(), quick: QUICK, machine, results }, null, 2)}\n`,
);
if (results.some((result) => !result.ok)) process.exitCode = 1;
