// Time from kill (force) to nothing left, for a task of 1,000 processes, per containment.
// cgroup: until the task's cgroup reports `populated 0`; process-group: until no process of it is alive.
// Usage: node dist/bench/kill-storm.js [--processes N] [--rounds N]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectClients, median, startBenchDaemon } from './lib.js';
import { findMarkedProcesses } from '../test/helpers/processes.js';

const { values } = parseArgs({ options: { processes: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' } } });
const PROCESSES = Number(values.processes);

async function killRound(containment: 'cgroup' | 'process-group', round: number): Promise<number> {
  const marker = `hive-bench-${process.pid}-${round}`;
  const daemon = await startBenchDaemon(['--containment', containment, '--max-running', '4']);
  const [client] = await connectClients(daemon.url, 1);
  try {
    const health = (await (await fetch(`${daemon.origin}/healthz`)).json()) as { containment: { cgroup_root: string | null } };
    const run = await client!.callTool({ name: 'run', arguments: { command: `for i in $(seq ${PROCESSES}); do sleep 1000 & done; wait`, env: { BENCH_MARK: marker }, wait_seconds: 0 } });
    const id = (run.structuredContent as { id: string }).id;
    const deadline = Date.now() + 60_000;
    while (findMarkedProcesses(`BENCH_MARK=${marker}`).length < PROCESSES + 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const cgroupDir = health.containment.cgroup_root === null ? null : readdirSync(health.containment.cgroup_root).map((name) => join(health.containment.cgroup_root!, name)).find((dir) => dir.includes('task-'));
    const start = process.hrtime.bigint();
    await client!.callTool({ name: 'kill', arguments: { id, force: true } });
    const empty = cgroupDir
      ? () => !existsSync(cgroupDir) || /^populated 0$/m.test(readFileSync(join(cgroupDir, 'cgroup.events'), 'utf8'))
      : () => findMarkedProcesses(`BENCH_MARK=${marker}`).length === 0;
    while (!empty()) await new Promise((resolve) => setImmediate(resolve));
    return Number(process.hrtime.bigint() - start) / 1e6;
  } finally {
    await client!.close();
    await daemon.stop();
  }
}

const rows = [];
for (const containment of ['cgroup', 'process-group'] as const) {
  const times: number[] = [];
  for (let round = 0; round < Number(values.rounds); round++) times.push(await killRound(containment, round));
  rows.push({ containment, processes: PROCESSES, median_ms: Number(median(times).toFixed(1)), worst_ms: Number(Math.max(...times).toFixed(1)), rounds: times.length });
}
console.table(rows);
console.log(JSON.stringify({ benchmark: 'kill-storm', goal: 'cgroup median < 50 ms', rows }));
