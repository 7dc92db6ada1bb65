// Measures the delay from a task's end to its end todo at the harness, over 1,000 tasks.
// The daemon is the real one, started as every benchmark starts it (bench/lib.ts); the
// harness is a unix socket server in this process that answers ok. A task's end is the `updated_at`
// of its end todo: the time the daemon's worker saw the leader exit (Date.now() there); its arrival
// is Date.now() here when the line is read. Both are the same machine's clock.
//
// Usage: node dist/bench/todo-latency.js [--tasks N (default 1000)]
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { connectClients, startBenchDaemon } from './lib.js';

const TASKS = Number(parseArgs({ options: { tasks: { type: 'string', default: '1000' } } }).values.tasks);
const CLIENTS = 4;
const END_STATES = new Set(['done', 'timed_out', 'killed', 'interrupted']);

interface Scenario {
  name: string;
  command: string;
  /** Calls in flight at once. */
  concurrency: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'one task at a time (`true`)', command: 'true', concurrency: 1 },
  { name: `${CLIENTS} clients submitting at once (\`sleep 0.05\`)`, command: 'sleep 0.05', concurrency: CLIENTS },
];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bench-todo-'));
  // The figures depend on what else the machine is doing: say so next to them.
  console.log(
    `${availableParallelism()} cores, load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')} before the run`,
  );
  const rows = [];
  try {
    for (const scenario of SCENARIOS)
      rows.push(printFigures(scenario, await measure(scenario, join(dir, scenario.concurrency.toString()))));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ benchmark: 'todo-latency', tasks: TASKS, rows }));
}

async function measure(scenario: Scenario, dir: string): Promise<number[]> {
  const socketPath = `${dir}.sock`;
  const delays = new Map<string, number>();
  const harness = createServer((socket) => answerEverything(socket, delays));
  await new Promise<void>((resolve) => harness.listen(socketPath, resolve));
  const daemon = await startBenchDaemon(
    ['--agent-socket', socketPath, '--retention-count', String(TASKS * 2)],
    {},
    dir,
  );
  try {
    const clients = await connectClients(daemon.url, scenario.concurrency);
    let next = 0;
    await Promise.all(
      clients.map(async (client) => {
        while (next < TASKS) {
          const name = `bench-${next++}`;
          await client.callTool({ name: 'run', arguments: { command: scenario.command, name, wait_seconds: 0 } });
        }
      }),
    );
    while (delays.size < TASKS) await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all(clients.map((client) => client.close()));
    return [...delays.values()];
  } finally {
    await daemon.stop();
    harness.close();
  }
}

/** The harness: answers ok to every line and notes when each task's end todo arrived. */
function answerEverything(socket: Socket, delays: Map<string, number>): void {
  createInterface({ input: socket }).on('line', (line) => {
    const arrivedAt = Date.now();
    const request = JSON.parse(line) as { cmd: string; key: string; state?: string; updated_at?: number };
    if (request.cmd === 'todo_upsert' && END_STATES.has(request.state!) && !delays.has(request.key)) {
      delays.set(request.key, arrivedAt - request.updated_at!);
    }
    socket.write('{"ok":true}\n');
  });
  socket.on('error', () => {});
}

function printFigures(
  scenario: Scenario,
  delays: number[],
): { scenario: string; median_ms: number; p99_ms: number; worst_ms: number } {
  const sorted = [...delays].sort((a, b) => a - b);
  const at = (fraction: number) => sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  console.log(
    `${scenario.name}: ${sorted.length} tasks; task end -> end todo at the harness (ms):` +
      ` median ${at(0.5)}, p90 ${at(0.9)}, p99 ${at(0.99)}, worst ${sorted.at(-1)}, best ${sorted[0]}, mean ${mean.toFixed(1)}`,
  );
  return { scenario: scenario.name, median_ms: at(0.5), p99_ms: at(0.99), worst_ms: sorted.at(-1)! };
}

await main();
