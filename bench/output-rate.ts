// One task writing 1 GiB to stdout through the daemon (pipe, worker, file) against
// `head -c 1G /dev/zero > file` into the same directory, alternated over rounds in this run
// (head first in even rounds, the daemon first in odd ones), with the machine's dirty pages
// flushed (`sync`) before every row and each row's file removed after it. A round in which the rest
// of the machine kept more than QUIET_OTHERS_CORES busy is measured again (up to three times the
// rounds in all). Prints the median and spread of each writer over the quiet rounds, the median of
// those rounds' own ratios, and the CPU each one spent per GiB.
// Usage: node dist/bench/output-rate.js [--mib N] [--rounds N] [--no-sync] [--keep-busy-rounds]
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { awaitReaped, daemonCpuMeter, readMachineCpu, readProcessCpu } from './cpu.js';
import { connectClients, median, roundRatios, secondsSince, spreadOf, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: {
    mib: { type: 'string', default: '1024' },
    rounds: { type: 'string', default: '7' },
    'no-sync': { type: 'boolean', default: false },
    'keep-busy-rounds': { type: 'boolean', default: false },
  },
});
const BYTES = Number(values.mib) * 1024 * 1024;
const GIB = BYTES / 2 ** 30;
const ROUNDS = Number(values.rounds);
const WARM_UP_BYTES = Math.min(BYTES, 16 * 1024 * 1024);
/**
 * The daemon's path keeps two processes busy (the task writing the pipe, the worker writing the
 * file), head one: other work taking a core slows the daemon's row more than head's. Measured
 * here: two runs of 7 rounds read 0.77 and 0.59, the second with the rest of the machine using a
 * median 0.6 to 0.8 of a core during its rows. Rounds above this are measured again.
 */
const QUIET_OTHERS_CORES = 0.5;

interface Row {
  writer: 'head' | 'daemon';
  round: number;
  mib_per_s: number;
  /** CPU seconds per GiB: head's (with its bash), or the daemon process's (main thread and workers). */
  cpu_s_per_gib: number;
  /** The daemon's spawners, shims, bash and head: what the task itself cost. */
  task_cpu_s_per_gib?: number;
  /** Cores the rest of the machine kept busy meanwhile (other work on a shared machine). */
  others_cores: number;
  dirty_mib_before_sync: number;
  counted?: boolean;
}

function dirtyMegabytes(): number {
  return Math.round(Number(/^Dirty:\s+(\d+)/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) / 1024);
}

/**
 * Dirty pages left by an earlier row (or by anything else on the machine) make the next writer pay:
 * measured here, a third 1 GiB written while 2 GiB were still dirty cost 4.6 to 5 s of CPU against
 * 1.0 to 1.4 s for the first. Every row starts with none.
 */
function flushDirtyPages(): number {
  const dirty = dirtyMegabytes();
  if (!values['no-sync']) execFileSync('sync');
  return dirty;
}

/** Writes `bytes` with head into `dir`; returns the seconds, head's CPU and the machine's busy CPU seconds meanwhile. */
function writeWithHead(dir: string, bytes: number): { seconds: number; cpu: number; busy: number } {
  const before = readProcessCpu(process.pid).children;
  const machine = readMachineCpu().busy;
  const start = process.hrtime.bigint();
  execFileSync('bash', ['-c', `head -c ${bytes} /dev/zero > ${join(dir, 'head.out')}`]);
  const seconds = secondsSince(start);
  const busy = readMachineCpu().busy - machine;
  const cpu = readProcessCpu(process.pid).children - before;
  rmSync(join(dir, 'head.out'));
  return { seconds, cpu, busy };
}

/** Runs `head -c bytes` as a task until it is done; returns its output file's path. */
async function writeThroughDaemon(client: Client, bytes: number): Promise<string> {
  let result = await client.callTool({
    name: 'run',
    arguments: { command: `head -c ${bytes} /dev/zero`, wait_seconds: 30, verbose: true },
  });
  let task = result.structuredContent as { id: string; state: string; stdout_bytes: number; stdout_path: string };
  while (task.state === 'running') {
    result = await client.callTool({
      name: 'status',
      arguments: { id: task.id, wait_seconds: 30, tail_bytes: 0, verbose: true },
    });
    task = result.structuredContent as typeof task;
  }
  if (task.stdout_bytes !== bytes)
    throw new Error(`the file holds ${task.stdout_bytes} bytes, not ${bytes}: ${JSON.stringify(task).slice(0, 400)}`);
  return task.stdout_path;
}

const daemon = await startBenchDaemon(['--max-output-bytes', '0']);
const meter = daemonCpuMeter(daemon.pid);
const rows: Row[] = [];
/** The rows of the quiet rounds. */
const counted: Row[] = [];
try {
  const [client] = await connectClients(daemon.url, 1);
  // Warm-up, not counted: the daemon's first task starts its spawner and compiles the pump.
  rmSync(await writeThroughDaemon(client!, WARM_UP_BYTES));
  writeWithHead(daemon.stateDir, WARM_UP_BYTES);
  const measureHead = (round: number): Row => {
    const dirty = flushDirtyPages();
    const { seconds, cpu, busy } = writeWithHead(daemon.stateDir, BYTES);
    const others = (busy - cpu) / seconds;
    return {
      writer: 'head',
      round,
      mib_per_s: BYTES / 2 ** 20 / seconds,
      cpu_s_per_gib: cpu / GIB,
      others_cores: others,
      dirty_mib_before_sync: dirty,
    };
  };
  const measureDaemon = async (round: number): Promise<Row> => {
    const dirty = flushDirtyPages();
    const machine = readMachineCpu();
    const mark = meter.mark();
    const start = process.hrtime.bigint();
    const path = await writeThroughDaemon(client!, BYTES);
    const seconds = secondsSince(start);
    const busy = readMachineCpu().busy - machine.busy;
    await awaitReaped(meter.spawners);
    const cpu = meter.since(mark);
    rmSync(path);
    const ours = cpu.daemon + cpu.spawners + cpu.tasks;
    return {
      writer: 'daemon',
      round,
      mib_per_s: BYTES / 2 ** 20 / seconds,
      cpu_s_per_gib: cpu.daemon / GIB,
      task_cpu_s_per_gib: (cpu.spawners + cpu.tasks) / GIB,
      others_cores: (busy - ours) / seconds,
      dirty_mib_before_sync: dirty,
    };
  };
  for (let round = 0; counted.length < ROUNDS * 2 && round < ROUNDS * 3; round++) {
    const pair =
      round % 2 === 0
        ? [measureHead(round), await measureDaemon(round)]
        : [await measureDaemon(round), measureHead(round)];
    const quiet = values['keep-busy-rounds'] || pair.every((row) => row.others_cores <= QUIET_OTHERS_CORES);
    for (const row of pair) rows.push({ ...row, counted: quiet });
    if (quiet) counted.push(...pair);
  }
  await client!.close();
} finally {
  await daemon.stop();
}

const round2 = (value: number) => Number(value.toFixed(2));
// On a machine busy throughout, every round is counted rather than none (and the figures say so).
const basis = counted.length > 0 ? counted : rows;
const of = (writer: Row['writer']) => basis.filter((row) => row.writer === writer);
const summary = (writer: Row['writer']) => {
  const mine = of(writer);
  const rates = spreadOf(mine.map((row) => row.mib_per_s));
  return {
    writer: writer === 'head' ? 'head -c > file' : 'task through the daemon',
    median_mib_per_s: rates.median,
    min_mib_per_s: rates.min,
    max_mib_per_s: rates.max,
    cpu_s_per_gib: round2(median(mine.map((row) => row.cpu_s_per_gib))),
    ...(writer === 'daemon' ? { task_cpu_s_per_gib: round2(median(mine.map((row) => row.task_cpu_s_per_gib!))) } : {}),
    others_cores: round2(median(mine.map((row) => row.others_cores))),
  };
};
const ratio = roundRatios(
  of('daemon').map((row) => row.mib_per_s),
  of('head').map((row) => row.mib_per_s),
);
const table = [summary('head'), summary('daemon')];
console.table(
  rows.map((row) => ({
    ...row,
    mib_per_s: Math.round(row.mib_per_s),
    cpu_s_per_gib: round2(row.cpu_s_per_gib),
    task_cpu_s_per_gib: row.task_cpu_s_per_gib === undefined ? undefined : round2(row.task_cpu_s_per_gib),
    others_cores: round2(row.others_cores),
  })),
);
console.table(table);
const rounds = basis.length / 2;
console.log(
  `ratio ${ratio.median} (the median of ${rounds} ${counted.length > 0 ? 'quiet ' : ''}rounds' own ratios, of ${rows.length / 2} measured; ${ratio.min} to ${ratio.max})`,
);
console.log(
  JSON.stringify({
    benchmark: 'output-rate',
    goal: 'ratio >= 0.9',
    mib: Number(values.mib),
    rounds,
    rounds_measured: rows.length / 2,
    quiet: counted.length > 0,
    synced: !values['no-sync'],
    ratio: ratio.median,
    round_ratio_min: ratio.min,
    round_ratio_max: ratio.max,
    rows: table,
  }),
);
