// Time from kill (force) to nothing left, for a task of 1,000 processes, per containment, against
// the kernel's own cgroup.kill measured in the same rounds (floor, cgroup, process-group, alternated).
// cgroup: until the task's cgroup reports `populated 0`; process-group: until no process of it is alive.
// Usage: node dist/bench/kill-storm.js [--processes N] [--rounds N]
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectClients, median, startBenchDaemon } from './lib.js';
import { findMarkedProcesses } from '../test/helpers/processes.js';
import { cgroup2Mount } from '../src/process/cgroups.js';

const { values } = parseArgs({ options: { processes: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '5' } } });
const PROCESSES = Number(values.processes);

/** True once the cgroup reports no process, or is gone (the daemon removes it once the task is released). */
function cgroupEmpty(dir: string): boolean {
  try {
    return /^populated 0$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'));
  } catch {
    return true;
  }
}

/** Polls `empty` every millisecond, as the floor does: the same waiter on both sides of the comparison. */
async function waitEmpty(empty: () => boolean): Promise<void> {
  while (!empty()) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** A process by its pid and start time (field 22 of its stat), so that a reused pid is not taken for it. */
interface KnownProcess {
  pid: number;
  startTime: string | null;
}

function readStat(pid: number): { state: string; startTime: string } | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const after = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
    return { state: after[0]!, startTime: after[19]! };
  } catch {
    return null;
  }
}

const identify = (pid: number): KnownProcess => ({ pid, startTime: readStat(pid)?.startTime ?? null });

function isAlive({ pid, startTime }: KnownProcess): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.startTime === startTime && stat.state !== 'Z' && stat.state !== 'X';
}

/**
 * Without a cgroup: the time (ms since `start`) at which the processes seen before the kill were
 * all dead, once a scan of the process table confirms that nothing else of the task is left.
 * Each poll stops at the first process still alive: a scan of every process's environment costs
 * about 60 ms of CPU here with 1,000 sleeps running, and the old waiter ran one every 5 ms, which
 * took a core from the kill it measured.
 */
async function waitProcessesGone(marker: string, known: KnownProcess[], start: bigint): Promise<number> {
  let remaining = known;
  for (;;) {
    await waitEmpty(() => {
      while (remaining.length > 0 && !isAlive(remaining[remaining.length - 1]!)) remaining.pop();
      return remaining.length === 0;
    });
    const at = Number(process.hrtime.bigint() - start) / 1e6;
    remaining = findMarkedProcesses(marker).map(identify);
    if (remaining.length === 0) return at;
  }
}

async function killRound(containment: 'cgroup' | 'process-group', round: number): Promise<{ elapsed: number; answered: number }> {
  const marker = `hive-bench-${process.pid}-${round}`;
  const daemon = await startBenchDaemon(['--containment', containment, '--max-running', '4']);
  const [client] = await connectClients(daemon.url, 1);
  try {
    const health = (await (await fetch(`${daemon.origin}/healthz`)).json()) as { containment: { cgroup_root: string | null } };
    const root = health.containment.cgroup_root;
    const run = await client!.callTool({ name: 'run', arguments: { command: `for i in $(seq ${PROCESSES}); do sleep 1000 & done; wait`, env: { BENCH_MARK: marker }, wait_seconds: 0 } });
    const id = (run.structuredContent as { id: string }).id;
    const deadline = Date.now() + 60_000;
    while (findMarkedProcesses(`BENCH_MARK=${marker}`).length < PROCESSES + 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const known = findMarkedProcesses(`BENCH_MARK=${marker}`);
    // The root may be shared with other daemons (other benches, tests): the task's cgroup is its processes' own.
    const cgroupDir = root === null ? null : join(cgroup2Mount()!, /^0::(.*)$/m.exec(readFileSync(`/proc/${known[0]}/cgroup`, 'utf8'))![1]!);
    if (cgroupDir !== null && !cgroupDir.startsWith(`${root}/task-`)) throw new Error(`the task's processes are in ${cgroupDir}, not in a task cgroup under ${root}`);
    const identified = known.map(identify);
    const start = process.hrtime.bigint();
    // The answer and the end are awaited together: the time is that of whichever comes last.
    const answered = client!.callTool({ name: 'kill', arguments: { id, force: true } }).then(() => Number(process.hrtime.bigint() - start) / 1e6);
    const gone = cgroupDir
      ? await waitEmpty(() => cgroupEmpty(cgroupDir)).then(() => Number(process.hrtime.bigint() - start) / 1e6)
      : await waitProcessesGone(`BENCH_MARK=${marker}`, identified, start);
    return { elapsed: Math.max(gone, await answered), answered: await answered };
  } finally {
    await client!.close();
    await daemon.stop();
  }
}

/** The floor: the bench itself writes cgroup.kill for the same number of sleeps, without the daemon. */
async function kernelFloorRound(): Promise<number | null> {
  const mount = cgroup2Mount();
  if (mount === null) return null;
  const dir = join(mount, `hive-bench-floor-${process.pid}`);
  mkdirSync(dir);
  const leader = spawn('bash', ['-c', `echo $$ > ${dir}/cgroup.procs; for i in $(seq ${PROCESSES}); do sleep 1000 & done; wait`], { stdio: 'ignore' });
  try {
    while (readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim().split('\n').length < PROCESSES + 1) await new Promise((resolve) => setTimeout(resolve, 50));
    const start = process.hrtime.bigint();
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    await waitEmpty(() => cgroupEmpty(dir));
    return Number(process.hrtime.bigint() - start) / 1e6;
  } finally {
    await new Promise((resolve) => (leader.exitCode === null && leader.signalCode === null ? leader.once('exit', resolve) : resolve(null)));
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        rmdirSync(dir);
        break;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
}

const CONTAINMENTS = ['cgroup', 'process-group'] as const;
const floor: number[] = [];
const times = { cgroup: [] as number[], 'process-group': [] as number[] };
const answers = { cgroup: [] as number[], 'process-group': [] as number[] };
// Alternated, so that the floor and each containment see the same load on this shared machine.
for (let round = 0; round < Number(values.rounds); round++) {
  const time = await kernelFloorRound();
  if (time !== null) floor.push(time);
  for (const containment of round % 2 === 0 ? CONTAINMENTS : [...CONTAINMENTS].reverse()) {
    const { elapsed, answered } = await killRound(containment, round);
    times[containment].push(elapsed);
    answers[containment].push(answered);
  }
}
const rows = [];
const ms = (value: number) => Number(value.toFixed(1));
if (floor.length > 0) rows.push({ containment: 'kernel floor: cgroup.kill written directly', processes: PROCESSES, median_ms: ms(median(floor)), worst_ms: ms(Math.max(...floor)), rounds: floor.length });
for (const containment of CONTAINMENTS) {
  const values = times[containment];
  // The daemon's share: each round's time less the floor measured just before it, then the median.
  const share = floor.length === values.length ? { share_ms: ms(median(values.map((value, round) => value - floor[round]!))) } : {};
  rows.push({ containment, processes: PROCESSES, median_ms: ms(median(values)), worst_ms: ms(Math.max(...values)), rounds: values.length, ...share, answer_median_ms: ms(median(answers[containment])) });
}
console.table(rows);
console.log(JSON.stringify({ benchmark: 'kill-storm', goal: "the daemon's share (share_ms: a round's time less its own floor, median) <= 10 ms", rows }));
