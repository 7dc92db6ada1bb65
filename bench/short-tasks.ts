// Short tasks through MCP (`run` of `echo hello` until done, 16 concurrent clients) against
// `xargs -P 16 -n1 bash -c 'echo hello'` on the same count, alternated over rounds in this run
// (the sides take turns in a rotating order; one daemon, warmed up first); rates are medians, the
// ratio the median of each round's own. A third side runs the same tasks sandboxed (writes beneath
// the temporary directory, no network): what a sandbox costs a task.
// Prints each side's median rate and spread, and the CPU per task of each process involved:
// the daemon (main thread and workers), its spawners, the shims with bash, the load generator,
// and xargs with its bash; plus the cores the rest of the machine kept busy meanwhile.
// Usage: node dist/bench/short-tasks.js [--tasks N] [--rounds N] [--clients N] [--max-running N] [--containment MODE]
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { awaitReaped, daemonCpuMeter, readMachineCpu, readProcessCpu } from './cpu.js';
import { alternateRounds, connectClients, median, roundRatios, rssMegabytes, runTasks, secondsSince, spreadOf, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '600' },
    rounds: { type: 'string', default: '5' },
    clients: { type: 'string', default: '16' },
    'max-running': { type: 'string', default: '64' },
    containment: { type: 'string', default: 'auto' },
  },
});
const TASKS = Number(values.tasks);
const ROUNDS = Number(values.rounds);
const CLIENTS = Number(values.clients);
const WARM_UP_TASKS = Math.min(50, Math.ceil(TASKS / 10));

/** The sandboxed side's run field. */
const SANDBOX = { write: [tmpdir()], network: false };

interface Row {
  side: 'xargs' | 'daemon' | 'sandboxed';
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
  return { side: 'xargs', tasks_per_s: TASKS / seconds, cpu_ms: { xargs_and_bash: (cpu * 1000) / TASKS }, others_cores: others / seconds, failures: 0 };
}

const daemon = await startBenchDaemon(['--max-running', values['max-running']!, '--retention-count', String(TASKS * (ROUNDS + 1) * 2), '--containment', values.containment!]);
const meter = daemonCpuMeter(daemon.pid);
let rows: Array<Row & { round: number }> = [];
let sides: Record<string, Row[]> = {};
let rssMb = 0;
try {
  const clients = await connectClients(daemon.url, CLIENTS);
  // Warm-up, not counted: starts the spawners and compiles the daemon's hot paths.
  await runTasks(clients, WARM_UP_TASKS, 'echo hello', 'hello\n');
  const measureDaemon = (side: 'daemon' | 'sandboxed') => async (): Promise<Row> => {
    await awaitReaped(meter.spawners);
    const machine = readMachineCpu();
    const mark = meter.mark();
    const generator = generatorCpu();
    const start = process.hrtime.bigint();
    const { failures } = await runTasks(clients, TASKS, 'echo hello', 'hello\n', side === 'sandboxed' ? { sandbox: SANDBOX } : {});
    const seconds = secondsSince(start);
    const busy = readMachineCpu().busy - machine.busy;
    const load = generatorCpu() - generator;
    await awaitReaped(meter.spawners);
    const cpu = meter.since(mark);
    const perTask = (value: number) => (value * 1000) / TASKS;
    const cpuMs = { daemon: perTask(cpu.daemon), spawners: perTask(cpu.spawners), shims_and_bash: perTask(cpu.tasks), load_generator: perTask(load) };
    const total = Object.values(cpuMs).reduce((sum, value) => sum + value, 0);
    return { side, tasks_per_s: TASKS / seconds, cpu_ms: { ...cpuMs, all: total }, others_cores: (busy - (total * TASKS) / 1000) / seconds, failures };
  };
  sides = await alternateRounds(ROUNDS, { xargs: measureXargs, daemon: measureDaemon('daemon'), sandboxed: measureDaemon('sandboxed') });
  rows = sides.xargs!.flatMap((row, round) => [{ ...row, round }, { ...sides.daemon![round]!, round }, { ...sides.sandboxed![round]!, round }]);
  rssMb = rssMegabytes(daemon.pid);
  await Promise.all(clients.map((client) => client.close()));
} finally {
  await daemon.stop();
}

const round2 = (value: number) => Number(value.toFixed(2));
const of = (side: Row['side']) => sides[side]!;
const summary = (side: Row['side']) => {
  const mine = of(side);
  const rates = spreadOf(mine.map((row) => row.tasks_per_s));
  const cpuMs: Record<string, number> = Object.fromEntries(Object.keys(mine[0]!.cpu_ms).map((who) => [who, round2(median(mine.map((row) => row.cpu_ms[who]!)))]));
  return { side, median_tasks_per_s: rates.median, min_tasks_per_s: rates.min, max_tasks_per_s: rates.max, cpu_ms_per_task: cpuMs, others_cores: round2(median(mine.map((row) => row.others_cores))) };
};
console.table(rows.map((row) => ({ side: row.side, round: row.round, tasks_per_s: Math.round(row.tasks_per_s), ...Object.fromEntries(Object.entries(row.cpu_ms).map(([who, ms]) => [`${who}_ms`, round2(ms)])), others_cores: round2(row.others_cores) })));
const xargs = summary('xargs');
const through = summary('daemon');
const sandboxed = summary('sandboxed');
console.table([xargs, through, sandboxed].map(({ cpu_ms_per_task, ...rest }) => ({ ...rest, ...Object.fromEntries(Object.entries(cpu_ms_per_task).map(([who, ms]) => [`${who}_ms`, ms])) })));
const ratio = roundRatios(of('daemon').map((row) => row.tasks_per_s), of('xargs').map((row) => row.tasks_per_s));
const sandboxRatio = roundRatios(of('sandboxed').map((row) => row.tasks_per_s), of('daemon').map((row) => row.tasks_per_s));
console.log(JSON.stringify({
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
  cpu_ratio: round2(xargs.cpu_ms_per_task.xargs_and_bash! / (through.cpu_ms_per_task.daemon! + through.cpu_ms_per_task.spawners! + through.cpu_ms_per_task.shims_and_bash!)),
  // The sandboxed tasks' rate against the same daemon's unsandboxed ones, round by round.
  sandboxed_tasks_per_s: sandboxed.median_tasks_per_s,
  sandbox_ratio: sandboxRatio.median,
  xargs,
  daemon: through,
  sandboxed,
  daemon_rss_mb_after: round2(rssMb),
  failures: [...of('daemon'), ...of('sandboxed')].reduce((sum, row) => sum + row.failures, 0),
}));
