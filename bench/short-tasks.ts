// Short tasks through MCP (`run` of `echo hello` until done, 16 concurrent callers) against
// `xargs -P 16 -n1 bash -c 'echo hello'` on the same count, alternated over rounds in this run
// (the sides take turns in a rotating order; one daemon, warmed up first); rates are medians, the
// ratio the median of each round's own. The callers are lean: raw MCP 2026-07-28 POSTs over
// undici's keep-alive pool, whose CPU is printed apart (the load generator's). The SDK's client
// (16 sessions of 2025-11-25) drives a second side, `sdk`; a third runs the lean side's tasks
// sandboxed (writes beneath the temporary directory, no network): what a sandbox costs a task.
// After the rounds, one caller alone: the latency of run to its result (back to back, sandboxed,
// and with a pause before each), and of a ping (p50, p99).
// Prints each side's median rate and spread, and the CPU per task of each process involved:
// the daemon (main thread and workers), its spawners, the shims with bash, the load generator,
// and xargs with its bash; plus the cores the rest of the machine kept busy meanwhile. A fifth side,
// `files`, is a floor: what creating a task's two empty output files costs on the file system of
// the daemon's state directory (in its output directory), which no change of the daemon's removes.
// A sixth side, `bare`, is the bare exec MCP server (bench/bare-exec-server.ts: over stdio, it runs
// `bash -c COMMAND` and answers its output, nothing more) driven by one SDK client with CLIENTS
// calls in flight: `bare_ratio` is the daemon's rate against it, `bare_cpu_ratio` the CPU a task of
// the daemon's whole tree (daemon, spawners, shims, bash) against the bare server's and its bash.
// --retention-count N runs the daemon at a retention count that every task's end prunes past
// (a long-lived daemon's state: each new task's files come as an old one's go); by default nothing
// is pruned.
// Usage: node dist/bench/short-tasks.js [--tasks N] [--rounds N] [--clients N] [--max-running N] [--containment MODE]
//   [--retention-count N]
import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { awaitReaped, daemonCpuMeter, readMachineCpu, readProcessCpu } from './cpu.js';
import { Pool } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  alternateRounds,
  connectClients,
  median,
  statelessCaller,
  openRawSession,
  percentile,
  roundRatios,
  rssMegabytes,
  runRawTasks,
  runTasks,
  secondsSince,
  spreadOf,
  startBenchDaemon,
} from './lib.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '600' },
    rounds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '16' },
    'max-running': { type: 'string', default: '64' },
    containment: { type: 'string', default: 'auto' },
    'retention-count': { type: 'string' },
  },
});
const TASKS = Number(values.tasks);
const ROUNDS = Number(values.rounds);
const CLIENTS = Number(values.clients);
const WARM_UP_TASKS = Math.min(50, Math.ceil(TASKS / 10));

/** The sandboxed side's run field. */
const SANDBOX = { write: [tmpdir()], network: false };
/** Sequential calls of each latency row. */
const LATENCY_CALLS = Math.min(200, TASKS);
/** The pause before each call of the spaced latency row. */
const SPACED_PAUSE_MS = 50;

interface Row {
  side: 'xargs' | 'files' | 'daemon' | 'sdk' | 'sandboxed' | 'bare';
  tasks_per_s: number;
  /** CPU ms per task, by whom. */
  cpu_ms: Record<string, number>;
  /** Cores the rest of the machine kept busy during the row. */
  others_cores: number;
  failures: number;
}

const generatorCpu = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

function measureXargs(): Row {
  const machine = readMachineCpu();
  const before = readProcessCpu(process.pid).children;
  const start = process.hrtime.bigint();
  execFileSync('bash', ['-c', `seq ${TASKS} | xargs -P ${CLIENTS} -n1 bash -c 'echo hello' > /dev/null`]);
  const seconds = secondsSince(start);
  const cpu = readProcessCpu(process.pid).children - before;
  const others = readMachineCpu().busy - machine.busy - cpu;
  return {
    side: 'xargs',
    tasks_per_s: TASKS / seconds,
    cpu_ms: { xargs_and_bash: (cpu * 1000) / TASKS },
    others_cores: others / seconds,
    failures: 0,
  };
}

let fileRounds = 0;

/**
 * The file system's share of a task: its two empty output files created (mode 0600, as the daemon
 * opens them) in the daemon's own output directory, under names no task has. Where they are
 * matters: an ext4 without a journal scans, at every creation, the inodes its block group freed in
 * the last minute or more (those of the last run's state directory, say).
 */
function measureFileCreation(dir: string): Row {
  const round = ++fileRounds;
  const before = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < TASKS; i++)
    for (const suffix of ['out', 'err'])
      closeSync(openSync(join(dir, `bench-floor-${round}-${i}.${suffix}`), 'w', 0o600));
  const seconds = secondsSince(start);
  const { user, system } = process.cpuUsage(before);
  return {
    side: 'files',
    tasks_per_s: TASKS / seconds,
    cpu_ms: { two_files: (user + system) / 1000 / TASKS },
    others_cores: 0,
    failures: 0,
  };
}

/** The bare exec server, started by an SDK client over stdio, and its pid. */
async function startBareServer(): Promise<{ client: Client; pid: number }> {
  const path = join(dirname(fileURLToPath(import.meta.url)), 'bare-exec-server.js');
  const transport = new StdioClientTransport({ command: process.execPath, args: [path] });
  const client = new Client({ name: 'short-tasks', version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

/** `total` calls of `exec` of `echo hello` on the bare server, CLIENTS in flight at once. */
async function runBareTasks(client: Client, total: number): Promise<number> {
  let next = 0;
  let failures = 0;
  const caller = async () => {
    // A call's turn is taken before it is made: 16 callers checking `next` at once would make more.
    while (next < total) {
      next++;
      const result = await client.callTool({ name: 'exec', arguments: { command: 'echo hello' } });
      if (result.isError || (result.structuredContent as { stdout?: string } | undefined)?.stdout !== 'hello\n')
        failures++;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, caller));
  return failures;
}

function measureBare(bare: { client: Client; pid: number }) {
  return async (): Promise<Row> => {
    const machine = readMachineCpu();
    const before = readProcessCpu(bare.pid);
    const generator = generatorCpu();
    const start = process.hrtime.bigint();
    const failures = await runBareTasks(bare.client, TASKS);
    const seconds = secondsSince(start);
    const after = readProcessCpu(bare.pid);
    const perTask = (value: number) => (value * 1000) / TASKS;
    const cpuMs = {
      server: perTask(after.own - before.own),
      bash: perTask(after.children - before.children),
      load_generator: perTask(generatorCpu() - generator),
    };
    const total = Object.values(cpuMs).reduce((sum, value) => sum + value, 0);
    const busy = readMachineCpu().busy - machine.busy;
    return {
      side: 'bare',
      tasks_per_s: TASKS / seconds,
      cpu_ms: { ...cpuMs, all: total },
      others_cores: (busy - (total * TASKS) / 1000) / seconds,
      failures,
    };
  };
}

const daemon = await startBenchDaemon([
  '--max-running',
  values['max-running'],
  '--retention-count',
  values['retention-count'] ?? String(TASKS * (ROUNDS + 1) * 2),
  '--containment',
  values.containment,
]);
const meter = daemonCpuMeter(daemon.pid);
// Where the daemon writes its tasks' output files (the state directory goes with the daemon).
const outputDir = join(daemon.stateDir, 'harness', 'bash-tasks');
let rows: Array<Row & { round: number }> = [];
let sides: Record<string, Row[]> = {};
let rssMb = 0;
let pool: Pool | undefined;
let latency: Record<string, { p50_ms: number; p99_ms: number }> = {};
let bare: { client: Client; pid: number } | undefined;
try {
  bare = await startBareServer();
  await runBareTasks(bare.client, WARM_UP_TASKS);
  const clients = await connectClients(daemon.url, CLIENTS);
  pool = new Pool(new URL(daemon.url).origin, { connections: CLIENTS });
  const lean = statelessCaller(pool);
  const drive = (side: Row['side']) =>
    side === 'sdk'
      ? runTasks(clients, TASKS, 'echo hello', 'hello\n')
      : runRawTasks(lean, CLIENTS, TASKS, 'echo hello', 'hello\n', side === 'sandboxed' ? { sandbox: SANDBOX } : {});
  // Warm-up, not counted: starts the spawners and compiles the daemon's hot paths, for both clients.
  await runTasks(clients, WARM_UP_TASKS, 'echo hello', 'hello\n');
  await runRawTasks(lean, CLIENTS, WARM_UP_TASKS, 'echo hello', 'hello\n');
  const measureDaemon = (side: 'daemon' | 'sdk' | 'sandboxed') => async (): Promise<Row> => {
    await awaitReaped(meter.spawners);
    const machine = readMachineCpu();
    const mark = meter.mark();
    const generator = generatorCpu();
    const start = process.hrtime.bigint();
    const { failures } = await drive(side);
    const seconds = secondsSince(start);
    const busy = readMachineCpu().busy - machine.busy;
    const load = generatorCpu() - generator;
    await awaitReaped(meter.spawners);
    const cpu = meter.since(mark);
    const perTask = (value: number) => (value * 1000) / TASKS;
    const cpuMs = {
      daemon: perTask(cpu.daemon),
      spawners: perTask(cpu.spawners),
      shims_and_bash: perTask(cpu.tasks),
      load_generator: perTask(load),
    };
    const total = Object.values(cpuMs).reduce((sum, value) => sum + value, 0);
    return {
      side,
      tasks_per_s: TASKS / seconds,
      cpu_ms: { ...cpuMs, all: total },
      others_cores: (busy - (total * TASKS) / 1000) / seconds,
      failures,
    };
  };
  sides = await alternateRounds(ROUNDS, {
    xargs: measureXargs,
    files: () => measureFileCreation(outputDir),
    daemon: measureDaemon('daemon'),
    sdk: measureDaemon('sdk'),
    sandboxed: measureDaemon('sandboxed'),
    bare: measureBare(bare),
  });
  rows = sides.xargs!.flatMap((row, round) =>
    (['xargs', 'files', 'daemon', 'sdk', 'sandboxed', 'bare'] as const).map((side) => ({
      ...sides[side]![round]!,
      round,
    })),
  );
  latency = await measureLatency(lean, await openRawSession(pool));
  rssMb = rssMegabytes(daemon.pid);
  await Promise.all(clients.map((client) => client.close()));
} finally {
  await bare?.client.close();
  await pool?.close();
  await daemon.stop();
}

/**
 * One caller alone, LATENCY_CALLS times each: run of `echo hello` to its result (2026-07-28), back
 * to back, then the same sandboxed (what a sandbox's set-up and teardown add to a start), then
 * unsandboxed after a pause of SPACED_PAUSE_MS each (an agent's pace: the kernel's state between
 * tasks differs, e.g. a cgroup join that waits out an RCU grace period), and a ping (a 2025
 * session's: 2026-07-28 has none).
 */
async function measureLatency(
  run: (name: string, args: Record<string, unknown>) => Promise<{ status: number; text: string }>,
  session: (name: string, args: Record<string, unknown>, method?: string) => Promise<{ status: number; text: string }>,
): Promise<Record<string, { p50_ms: number; p99_ms: number }>> {
  const timed = async (call: () => Promise<unknown>, pauseMs = 0) => {
    const ms: number[] = [];
    for (let i = 0; i < LATENCY_CALLS; i++) {
      if (pauseMs > 0) await sleep(pauseMs);
      const start = process.hrtime.bigint();
      await call();
      ms.push(secondsSince(start) * 1000);
    }
    const hundredths = (value: number) => Math.round(value * 100) / 100;
    return { p50_ms: hundredths(percentile(ms, 0.5)), p99_ms: hundredths(percentile(ms, 0.99)) };
  };
  const runEcho = () => run('run', { command: 'echo hello', wait_seconds: 30 });
  const runSandboxed = () => run('run', { command: 'echo hello', wait_seconds: 30, sandbox: SANDBOX });
  return {
    run_echo_hello: await timed(runEcho),
    sandboxed_run_echo_hello: await timed(runSandboxed),
    spaced_run_echo_hello: await timed(runEcho, SPACED_PAUSE_MS),
    ping: await timed(() => session('', {}, 'ping')),
  };
}

const round2 = (value: number) => Number(value.toFixed(2));
const of = (side: Row['side']) => sides[side]!;
const summary = (side: Row['side']) => {
  const mine = of(side);
  const rates = spreadOf(mine.map((row) => row.tasks_per_s));
  const cpuMs: Record<string, number> = Object.fromEntries(
    Object.keys(mine[0]!.cpu_ms).map((who) => [who, round2(median(mine.map((row) => row.cpu_ms[who]!)))]),
  );
  return {
    side,
    median_tasks_per_s: rates.median,
    min_tasks_per_s: rates.min,
    max_tasks_per_s: rates.max,
    cpu_ms_per_task: cpuMs,
    others_cores: round2(median(mine.map((row) => row.others_cores))),
  };
};
console.table(
  rows.map((row) => ({
    side: row.side,
    round: row.round,
    tasks_per_s: Math.round(row.tasks_per_s),
    ...Object.fromEntries(Object.entries(row.cpu_ms).map(([who, ms]) => [`${who}_ms`, round2(ms)])),
    others_cores: round2(row.others_cores),
  })),
);
const xargs = summary('xargs');
const files = summary('files');
const through = summary('daemon');
const sdk = summary('sdk');
const sandboxed = summary('sandboxed');
const bareSide = summary('bare');
console.table(
  [xargs, files, through, sdk, sandboxed, bareSide].map(({ cpu_ms_per_task, ...rest }) => ({
    ...rest,
    ...Object.fromEntries(Object.entries(cpu_ms_per_task).map(([who, ms]) => [`${who}_ms`, ms])),
  })),
);
const ratio = roundRatios(
  of('daemon').map((row) => row.tasks_per_s),
  of('xargs').map((row) => row.tasks_per_s),
);
const sandboxRatio = roundRatios(
  of('sandboxed').map((row) => row.tasks_per_s),
  of('daemon').map((row) => row.tasks_per_s),
);
const sdkRatio = roundRatios(
  of('sdk').map((row) => row.tasks_per_s),
  of('xargs').map((row) => row.tasks_per_s),
);
const bareRatio = roundRatios(
  of('daemon').map((row) => row.tasks_per_s),
  of('bare').map((row) => row.tasks_per_s),
);
/** The CPU a task of the daemon's whole tree: the daemon, its spawners, the shims and bash. */
const daemonTreeMs = (row: Row) => row.cpu_ms.daemon! + row.cpu_ms.spawners! + row.cpu_ms.shims_and_bash!;
const bareCpuRatio = roundRatios(
  of('daemon').map(daemonTreeMs),
  of('bare').map((row) => row.cpu_ms.server! + row.cpu_ms.bash!),
);
console.table(Object.entries(latency).map(([call, figures]) => ({ call, ...figures })));
console.log(
  JSON.stringify({
    benchmark: 'short-tasks',
    containment: values.containment,
    tasks: TASKS,
    rounds: ROUNDS,
    clients: CLIENTS,
    xargs_tasks_per_s: xargs.median_tasks_per_s,
    daemon_tasks_per_s: through.median_tasks_per_s,
    ratio: ratio.median,
    round_ratio_min: ratio.min,
    round_ratio_max: ratio.max,
    // What the rates would be on a machine with nothing else to do and no idle core: CPU per task.
    cpu_ratio: round2(
      xargs.cpu_ms_per_task.xargs_and_bash! /
        (through.cpu_ms_per_task.daemon! + through.cpu_ms_per_task.spawners! + through.cpu_ms_per_task.shims_and_bash!),
    ),
    // Creating a task's two output files on the state directory's file system: part of the
    // daemon's CPU above, and a floor of it, as no design that writes output files avoids it.
    file_creation_ms: files.cpu_ms_per_task.two_files,
    // The same tasks from the SDK's clients, against xargs.
    sdk_tasks_per_s: sdk.median_tasks_per_s,
    sdk_ratio: sdkRatio.median,
    latency,
    // The sandboxed tasks' rate against the same daemon's unsandboxed ones, round by round.
    sandboxed_tasks_per_s: sandboxed.median_tasks_per_s,
    sandbox_ratio: sandboxRatio.median,
    // Against the bare exec MCP server (goal, issue 54: rate at least 0.8x, CPU a task at most 1.25x).
    bare_tasks_per_s: bareSide.median_tasks_per_s,
    bare_ratio: bareRatio.median,
    bare_ratio_min: bareRatio.min,
    bare_ratio_max: bareRatio.max,
    bare_cpu_ratio: bareCpuRatio.median,
    bare_cpu_ratio_min: bareCpuRatio.min,
    bare_cpu_ratio_max: bareCpuRatio.max,
    xargs,
    daemon: through,
    sdk,
    sandboxed,
    bare: bareSide,
    daemon_rss_mb_after: round2(rssMb),
    failures: [...of('daemon'), ...of('sdk'), ...of('sandboxed'), ...of('bare')].reduce(
      (sum, row) => sum + row.failures,
      0,
    ),
  }),
);
