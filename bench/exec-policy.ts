// What the command policy costs a task: a loop of N `/bin/true` in one task (every one an exec the
// task's shim matches) on a daemon with --policy (three rules, two deny and one ask, none matching
// /bin/true) against the same loop on a daemon without, the two alternated over rounds. Per run: the
// loop's wall time (timed inside the task, by bash), and the CPU of the task's processes (its
// cgroup) and of its shim (which matches each exec), read while the task waits at its end.
// Usage: node dist/bench/exec-policy.js [--execs N] [--rounds N]
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readProcessCpu } from './cpu.js';
import { alternateRounds, connectClients, roundRatios, spreadOf, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: { execs: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' } },
});
const EXECS = Number(values.execs);
const ROUNDS = Number(values.rounds);
/** The loop, its wall time in µs printed once done; then the task waits (stdin open) to be read and killed. */
const COMMAND = `s=$(date +%s%N); for i in $(seq ${EXECS}); do /bin/true; done; e=$(date +%s%N); echo $(((e - s) / 1000)); exec cat`;
const POLICY = {
  default: 'allow',
  rules: [
    { match: ['git', 'push', '--force'], decision: 'deny', reason: 'no force pushes' },
    { match: ['rm', '-rf', '/'], decision: 'deny', reason: 'not the root' },
    { match: ['npm', 'publish'], decision: 'ask', reason: 'a release is a person’s call' },
  ],
};

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

interface LoopRun {
  wallMs: number;
  taskCpuMs: number;
  shimCpuMs: number;
}

/** One loop in a task: its wall time, and the CPU of its processes and of its shim, read before it ends. */
async function runLoop(client: Client): Promise<LoopRun> {
  let view = await call(client, 'run', {
    command: COMMAND,
    interactive: true,
    wait_for: '^[0-9]+$',
    wait_seconds: 30,
    verbose: true,
  });
  while (view.wait_result !== 'matched') {
    if (view.state !== 'running') throw new Error(`the loop ended early: ${JSON.stringify(view)}`);
    view = await call(client, 'status', { id: view.id, wait_for: '^[0-9]+$', wait_seconds: 30, verbose: true });
  }
  const shim = Number(/^\d+ \(.*\) \S (\d+)/s.exec(readFileSyncSafe(`/proc/${view.pid}/stat`))?.[1]);
  const shimCpuMs = readProcessCpu(shim).own * 1000;
  const taskCpuMs = (await call(client, 'status', { id: view.id, verbose: true })).cpu_ms as number;
  await call(client, 'kill', { id: view.id, force: true });
  return { wallMs: Number(view.matched_line) / 1000, taskCpuMs, shimCpuMs };
}

function readFileSyncSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hive-bench-policy-'));
const policyFile = join(dir, 'policy.json');
writeFileSync(policyFile, JSON.stringify(POLICY));
const [withPolicy, without] = await Promise.all([startBenchDaemon(['--policy', policyFile]), startBenchDaemon([])]);
try {
  const [policyClient] = await connectClients(withPolicy.url, 1);
  const [plainClient] = await connectClients(without.url, 1);
  const runs = await alternateRounds(ROUNDS, {
    policy: () => runLoop(policyClient!),
    none: () => runLoop(plainClient!),
  });
  const total = (run: LoopRun) => run.taskCpuMs + run.shimCpuMs;
  const row = {
    benchmark: 'exec-policy',
    execs: EXECS,
    rounds: ROUNDS,
    wall_ms: {
      policy: spreadOf(runs.policy!.map((run) => run.wallMs)),
      none: spreadOf(runs.none!.map((run) => run.wallMs)),
    },
    wall_ratio: roundRatios(
      runs.policy!.map((run) => run.wallMs),
      runs.none!.map((run) => run.wallMs),
    ),
    cpu_ms: { policy: spreadOf(runs.policy!.map(total)), none: spreadOf(runs.none!.map(total)) },
    shim_cpu_ms: {
      policy: spreadOf(runs.policy!.map((run) => run.shimCpuMs)),
      none: spreadOf(runs.none!.map((run) => run.shimCpuMs)),
    },
    cpu_ratio: roundRatios(runs.policy!.map(total), runs.none!.map(total)),
  };
  process.stdout.write(
    [
      `exec-policy: ${EXECS} /bin/true in one task, ${ROUNDS} round(s), with --policy against without`,
      `  loop wall time   ${row.wall_ms.policy.median} ms against ${row.wall_ms.none.median} ms: ${row.wall_ratio.median}x (${row.wall_ratio.min} to ${row.wall_ratio.max})`,
      `  task + shim CPU  ${row.cpu_ms.policy.median} ms against ${row.cpu_ms.none.median} ms: ${row.cpu_ratio.median}x (${row.cpu_ratio.min} to ${row.cpu_ratio.max}); the shim's ${row.shim_cpu_ms.policy.median} against ${row.shim_cpu_ms.none.median} ms`,
      '',
    ].join('\n'),
  );
  await policyClient!.close();
  await plainClient!.close();
  process.stdout.write(`${JSON.stringify(row)}\n`);
} finally {
  await Promise.all([withPolicy.stop(), without.stop()]);
  rmSync(dir, { recursive: true, force: true });
}
