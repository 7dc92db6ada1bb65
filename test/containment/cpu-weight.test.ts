// Tasks run at a tenth of the daemon's CPU weight, set once at start and shown in /healthz: in the
// folder of the task cgroups (cgroup v2's cpu.weight), else in a cgroup v1 cpu folder their
// spawner joined (cpu.shares), else at nice 10, their session's autogroup too. So a flood of tasks
// leaves the daemon a core as soon as it wants one (bench/status-under-flood).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';
import { cpuV1Mount } from '../helpers/cgroups.js';
import { nativeContainment, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

/** Prints what decides the task's weight: its cgroups, its session's autogroup, its nice value. */
const SHOW_WEIGHT = 'cat /proc/self/cgroup; cat /proc/self/autogroup 2>/dev/null; echo "nice $(ps -o ni= -p $$)"';

/** The processes in cgroup `dir` and the cgroups beneath it; none once it is gone. */
function processesIn(dir: string): string[] {
  try {
    const own = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
    const below = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    return [...own, ...below.flatMap((entry) => processesIn(join(dir, entry.name)))];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function weightOf(daemon: TestDaemon): Promise<any> {
  return ((await (await fetch(`${daemon.origin}/healthz`)).json()) as any).containment.task_cpu_weight;
}

test("tasks run in a cgroup that holds a tenth of the daemon's CPU weight, the daemon outside it", async (t) => {
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const weight = await weightOf(daemon);
  if (weight.via === 'nice') return t.skip(`no cgroup takes a CPU weight here: ${JSON.stringify(weight)}`);
  const tools = await connectClient(t, daemon.url);
  const shown = (await tools.ok('run', { command: SHOW_WEIGHT, wait_seconds: 30 })).stdout_tail as string;
  const daemonCgroups = readFileSync(`/proc/${daemon.child.pid}/cgroup`, 'utf8');
  if (weight.via === 'cgroup v2') {
    assert.equal(readFileSync(join(weight.dir, 'cpu.weight'), 'utf8').trim(), '10');
    const path = /^0::(.*)$/m.exec(shown)![1]!;
    assert.ok(join('/sys/fs/cgroup', path).startsWith(`${weight.dir}/`), `the task is in ${path}: ${shown}`);
  } else {
    assert.equal(weight.via, 'cgroup v1', JSON.stringify(weight));
    assert.equal(readFileSync(join(weight.dir, 'cpu.shares'), 'utf8').trim(), '102');
    // The tasks in a folder inside the daemon's own cpu cgroup, where the daemon stays: its threads
    // keep a weight of 1024 each, the tasks share 102.
    const mount = cpuV1Mount()!;
    const cpuLine = (text: string) => /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(.*)$/m.exec(text)?.[1];
    assert.equal(cpuLine(shown), weight.dir.slice(mount.length), `the task's cgroups: ${shown}`);
    const parent = dirname(weight.dir).slice(mount.length) || '/';
    assert.equal(cpuLine(daemonCgroups), parent, `the daemon's cgroups: ${daemonCgroups}`);
    assert.equal(await daemon.stop(), 0, daemon.stderr());
    assert.equal(existsSync(weight.dir), false, 'the daemon removed its folder at its stop');
    return;
  }
  assert.match(shown, /^nice +0$/m, 'no nice on top of the cgroup');
});

test("a crashed daemon's cgroup v1 cpu folder is taken by the next start on its state dir, and removed at its stop", async (t) => {
  const first = await startTestDaemon(t, { containment: nativeContainment() });
  const weight = await weightOf(first);
  if (weight.via !== 'cgroup v1')
    return t.skip(`the weight is not set by a cgroup v1 folder here: ${JSON.stringify(weight)}`);
  await first.crash();
  // The crashed daemon's spawner ends after it (its parent-death signal): a folder holding it cannot be removed.
  const folder = weight.dir;
  assert.ok(await waitFor(() => processesIn(folder).length === 0, 30_000), `left in ${folder}: ${processesIn(folder)}`);
  const next = await startTestDaemon(t, { containment: nativeContainment(), stateDir: first.stateDir });
  assert.deepEqual(await weightOf(next), weight, 'the same folder, named by the state dir');
  assert.equal(await next.stop(), 0, next.stderr());
  assert.equal(existsSync(weight.dir), false, 'the folder is gone');
});

test("a daemon's start leaves another daemon's cgroup v1 cpu folder alone, an empty one too", async (t) => {
  const first = await startTestDaemon(t, { containment: nativeContainment() });
  const weight = await weightOf(first);
  if (weight.via !== 'cgroup v1')
    return t.skip(`the weight is not set by a cgroup v1 folder here: ${JSON.stringify(weight)}`);
  // An empty folder named as a daemon's on another state dir, beside this one's: one that daemon may
  // have just made, and not yet moved its spawner into.
  const other = join(dirname(weight.dir), `${basename(weight.dir)}-other-${process.pid}`);
  mkdirSync(other);
  t.after(() => existsSync(other) && rmdirSync(other));
  const second = await startTestDaemon(t, { containment: nativeContainment() });
  assert.equal((await weightOf(second)).via, 'cgroup v1');
  assert.ok(existsSync(other), "the other daemon's folder is still there");
  rmdirSync(other);
});

const UNSHARE = spawnSync('unshare', ['--version'], { stdio: 'ignore' }).status === 0;
const skipNice =
  process.getuid?.() !== 0
    ? 'read-only cgroup mounts are made here as root (unshare --mount)'
    : !UNSHARE
      ? 'unshare is not installed'
      : cpuV1Mount() === null
        ? 'no cgroup v1 cpu hierarchy to hide: this host gives the weight by cgroup v2'
        : false;

test(
  'where no cgroup takes a CPU weight, tasks run at nice 10, their session scheduled at nice 10 too',
  { skip: skipNice },
  async (t) => {
    // The daemon in a mount namespace of its own where the cgroup v1 cpu hierarchy is read-only.
    const wrapper = [
      'unshare',
      '--mount',
      '--',
      'sh',
      '-c',
      `mount -o remount,bind,ro ${cpuV1Mount()} && exec "$@"`,
      'sh',
    ];
    const daemon = await startTestDaemon(t, { containment: nativeContainment(), wrapper });
    assert.deepEqual(await weightOf(daemon), { via: 'nice', nice: 10 });
    const tools = await connectClient(t, daemon.url);
    const shown = (await tools.ok('run', { command: SHOW_WEIGHT, wait_seconds: 30 })).stdout_tail as string;
    assert.match(shown, /^nice +10$/m, shown);
    if (readFileSync('/proc/sys/kernel/sched_autogroup_enabled', 'utf8').trim() === '1')
      assert.match(shown, /^\/autogroup-\d+ nice 10$/m, shown);
    const daemonNice = readFileSync(`/proc/${daemon.child.pid}/stat`, 'latin1').split(') ')[1]!.split(' ')[16];
    assert.equal(daemonNice, '0', 'the daemon itself keeps nice 0');
  },
);
