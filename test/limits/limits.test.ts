// Per-task limits with real processes in real cgroups: memory (an OOM end that says so), processes
// (a fork bomb that stays inside), CPU, the daemon's defaults and ceilings, and every refusal.
import assert from 'node:assert/strict';
import { LIMITS_REMEDY } from '../../src/errors.js';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { daemonV1Folder, daemonV1Folders, listDaemonV1TaskCgroups, removeDaemonV1Folders } from '../helpers/cgroups.js';
import { daemonFolderName } from '../../src/process/cgroups.js';
import { runDaemonBinary, startTestDaemon, type TestContainment, type TestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

const HAS_V1 = ['memory', 'pids', 'cpu'].every((controller) =>
  existsSync(join('/sys/fs/cgroup', controller, 'cgroup.procs')),
);
const V1_SKIP = HAS_V1 ? false : 'this host mounts no cgroup v1 memory, pids and cpu hierarchies';
const V2_CONTROLLERS = (() => {
  try {
    return readFileSync('/sys/fs/cgroup/unified/cgroup.controllers', 'utf8');
  } catch {
    return readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8');
  }
})();
const HAS_V2 = ['memory', 'pids', 'cpu'].every((controller) => V2_CONTROLLERS.split(/\s+/).includes(controller));
const V2_SKIP = HAS_V2
  ? false
  : `this host's cgroup v2 tree has not the memory, pids and cpu controllers (it has: ${V2_CONTROLLERS.trim() || 'none'}), so limits go to its v1 hierarchies (tested above)`;
/** Allocates in one go, far past the limits below. */
const ALLOCATE = `python3 -c "b = bytearray(400 << 20)"`;

async function setUp(t: TestContext, containment: TestContainment, args: string[] = []) {
  const daemon = await startTestDaemon(t, { containment, args: ['--kill-grace-ms', '500', ...args] });
  return { daemon, tools: await connectClient(t, daemon.url) };
}

/** A SIGTERM stop waits for its tasks' release (their cgroups removed); a SIGKILL at teardown would not. */
const STOPS_CLEANLY = 'the daemon stops on SIGTERM once its tasks are released';

/**
 * Once its tasks are released, no task cgroup is left in the daemon's own v1 folders (the v1
 * hierarchies' shared folder holds other daemons' too, none of this test's business).
 */
async function assertNoTaskCgroupLeft(daemon: TestDaemon): Promise<void> {
  const left = () => listDaemonV1TaskCgroups(daemon.stateDir);
  assert.ok(await waitFor(() => left().length === 0, 10_000), `left: ${left().join(', ')}`);
}

/** Stops the daemon by SIGTERM: it exits 0 and leaves no folder of its own in any v1 hierarchy. */
async function assertStopsCleanly(daemon: TestDaemon): Promise<void> {
  assert.equal(await daemon.stop(), 0, STOPS_CLEANLY);
  const left = daemonV1Folders(daemon.stateDir).filter((folder) => existsSync(folder));
  assert.deepEqual(left, [], "the stop removed the daemon's v1 folders");
}

/** The final view of a task: once its worker let it go (nothing of it left). */
async function released(tools: Awaited<ReturnType<typeof setUp>>['tools'], id: string) {
  return tools.statusWhen(
    id,
    (view) => view.state !== 'running' && view.processes === 0,
    `task ${id} ended and was released`,
    60_000,
    { wait_seconds: 5 },
  );
}

/** The limit tests, for a daemon in `containment` whose limits the healthz says live in `place`. */
function limitSuite(containment: TestContainment, place: RegExp): void {
  test('a task past memory_limit_mb ends with oom_killed and says so, while a task beside it and the daemon go on', async (t) => {
    const { daemon, tools } = await setUp(t, containment);
    const health = (await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as any;
    for (const controller of ['memory', 'pids', 'cpu'])
      assert.match(health.limits[controller], place, `${controller}: ${health.limits[controller]}`);
    if (place.source.includes('v1'))
      assert.equal(
        health.limits.memory,
        `cgroup v1 ${daemonV1Folder(daemon.stateDir, 'memory')}`,
        "the tasks' v1 cgroups are in the daemon's folder, under its own cgroup",
      );
    const bystander = await tools.ok('run', {
      command: 'echo ready; sleep 300',
      wait_for: '^ready$',
      wait_seconds: 30,
    });
    const task = await tools.ok('run', { command: `exec ${ALLOCATE}`, memory_limit_mb: 64, wait_seconds: 30 });
    assert.deepEqual(
      [task.state, task.oom_killed, task.error],
      ['done', true, 'killed by the kernel: out of memory (limit 64 MiB)'],
    );
    assert.deepEqual([task.exit_code, task.signal], [137, 'SIGKILL']);
    assert.deepEqual(task.limits, { memory_limit_mb: 64, max_processes: null, cpu_limit: null });
    const final = await released(tools, task.id);
    assert.ok(
      final.memory_peak_bytes > 32 * 1024 * 1024 && final.memory_peak_bytes <= 64 * 1024 * 1024,
      `memory_peak_bytes ${final.memory_peak_bytes}`,
    );
    const listed = (await tools.ok('list', {})).tasks.find((row: any) => row.id === task.id);
    assert.equal(listed.state, 'done');
    const still = await tools.ok('status', { id: bystander.id });
    assert.deepEqual([still.state, still.stdout_tail], ['running', 'ready\n'], 'the task beside it runs on');
    assert.equal((await tools.ok('run', { command: 'echo alive' })).stdout_tail, 'alive\n', 'the daemon serves');
    await tools.ok('kill', { id: bystander.id, force: true });
    assert.equal(daemon.child.exitCode, null);
    await assertStopsCleanly(daemon);
  });

  test("an OOM kill takes the task's helpers with it", async (t) => {
    const { daemon, tools } = await setUp(t, containment);
    const marker = `HELPERS=${daemon.marker}`;
    const task = await tools.ok('run', {
      command: `sleep 300 & sleep 301 & ${ALLOCATE}; wait`,
      env: { HELPERS: daemon.marker },
      memory_limit_mb: 64,
      wait_seconds: 30,
    });
    assert.deepEqual([task.state, task.oom_killed], ['done', true], JSON.stringify(task));
    await released(tools, task.id);
    assert.ok(
      await waitFor(() => findMarkedProcesses(marker).length === 0, 10_000),
      `left: ${findMarkedProcesses(marker)}`,
    );
    await assertNoTaskCgroupLeft(daemon);
  });

  test('a fork bomb under max_processes stays within it, is counted, and can still be killed', async (t) => {
    const { daemon, tools } = await setUp(t, containment);
    const marker = `BOMB=${daemon.marker}`;
    const task = await tools.ok('run', {
      command: 'bomb() { bomb | bomb & }; bomb; sleep 300',
      env: { BOMB: daemon.marker },
      max_processes: 40,
      wait_seconds: 0,
    });
    const hit = await tools.statusWhen(
      task.id,
      (view) => view.pids_limit_hits > 0,
      'forks were refused at the cap',
      30_000,
    );
    assert.ok(hit.processes <= 40, `processes ${hit.processes} within max_processes 40`);
    const anywhere = findMarkedProcesses(marker).length;
    assert.ok(
      anywhere > 0 && anywhere <= 40,
      `${anywhere} of the bomb's processes exist anywhere, no more than the cap`,
    );
    await tools.ok('kill', { id: task.id, force: true });
    const final = await released(tools, task.id);
    assert.equal(final.state, 'killed');
    assert.ok(final.pids_limit_hits > 0, `pids_limit_hits ${final.pids_limit_hits} is kept`);
    assert.ok(await waitFor(() => findMarkedProcesses(marker).length === 0, 10_000), 'nothing of the bomb is left');
    await assertNoTaskCgroupLeft(daemon);
  });

  test('a busy loop under cpu_limit 0.2 uses about a fifth of a CPU', async (t) => {
    const { daemon, tools } = await setUp(t, containment);
    const task = await tools.ok('run', {
      command: 'end=$((SECONDS + 3)); while [ $SECONDS -lt $end ]; do :; done',
      cpu_limit: 0.2,
      wait_seconds: 30,
    });
    assert.equal(task.state, 'done');
    const final = await released(tools, task.id);
    const share = final.cpu_ms / final.runtime_ms;
    assert.ok(
      share > 0.05 && share < 0.4,
      `cpu_ms ${final.cpu_ms} over runtime_ms ${final.runtime_ms} is ${share.toFixed(2)} of a CPU`,
    );
    assert.equal(final.limits.cpu_limit, 0.2);
    await assertNoTaskCgroupLeft(daemon);
  });
}

for (const containment of ['cgroup', 'process-group'] as const) {
  describe(
    `limits in cgroup v1 hierarchies, ${containment === 'cgroup' ? 'cgroup v2 for kill' : 'process group and shim for kill'}`,
    { skip: containment === 'cgroup' && HAS_V2 ? 'the v2 subtree holds the controllers here' : V1_SKIP },
    () => limitSuite(containment, /^cgroup v1 /),
  );
}

describe('limits in a cgroup v2 subtree with its own controllers', { skip: V2_SKIP }, () =>
  limitSuite('cgroup', /^cgroup v2$/),
);

test(
  'the daemon defaults apply, a run may ask for less or more up to the ceiling, and past it is refused',
  { skip: V1_SKIP },
  async (t) => {
    const { daemon, tools } = await setUp(t, 'cgroup', [
      '--task-memory-limit-mb',
      '256',
      '--task-memory-limit-mb-ceiling',
      '512',
      '--task-max-processes',
      '1000',
    ]);
    const plain = await tools.ok('run', { command: 'true' });
    assert.deepEqual(plain.limits, { memory_limit_mb: 256, max_processes: 1000, cpu_limit: null });
    assert.equal((await tools.ok('run', { command: 'true', memory_limit_mb: 128 })).limits.memory_limit_mb, 128);
    assert.equal((await tools.ok('run', { command: 'true', memory_limit_mb: 512 })).limits.memory_limit_mb, 512);
    const refused = await tools.call('run', { command: 'true', memory_limit_mb: 1024 });
    assert.equal(refused.isError, true);
    assert.equal(
      refused.text,
      'Invalid run input: "memory_limit_mb" must be at most 512 MiB, the ceiling the operator set (--task-memory-limit-mb-ceiling); got 1024 (number)',
    );
    assert.equal(refused.structured.error.code, 'ERR_INVALID_INPUT');
    await assertStopsCleanly(daemon);
  },
);

test('a ceiling without a default caps a run that asks for nothing', { skip: V1_SKIP }, async (t) => {
  const { daemon, tools } = await setUp(t, 'cgroup', ['--task-max-processes-ceiling', '500']);
  assert.equal((await tools.ok('run', { command: 'true' })).limits.max_processes, 500);
  assert.equal((await tools.ok('run', { command: 'true', max_processes: 20 })).limits.max_processes, 20);
  await assertStopsCleanly(daemon);
});

test(
  "a crashed daemon's limited tasks leave no cgroup in any hierarchy once the next one has started",
  { skip: V1_SKIP },
  async (t) => {
    const first = await startTestDaemon(t, { containment: 'cgroup' });
    const tools = await connectClient(t, first.url);
    const task = await tools.ok('run', {
      command: 'sleep 300',
      memory_limit_mb: 256,
      max_processes: 100,
      cpu_limit: 1,
      wait_seconds: 0.5,
    });
    // Its pid, once started (run's wait can end before that on a loaded machine).
    const { pid } = await tools.statusWhen(task.id, (view) => view.pid !== null, 'the task started');
    // Its own cgroups, by name (task-<run key>), in the daemon's folders.
    const name = /\/(task-[0-9a-f-]+)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))![1]!;
    const ours = () => listDaemonV1TaskCgroups(first.stateDir).filter((dir) => dir.endsWith(`/${name}`));
    assert.equal(ours().length, 3, `one cgroup per limit's hierarchy: ${ours().join(', ')}`);
    await first.crash();
    const next = await startTestDaemon(t, {
      containment: 'cgroup',
      stateDir: first.stateDir,
      env: { HIVE_TEST_MARK: first.marker },
    });
    assert.deepEqual(ours(), [], 'the start removed them');
    await assertStopsCleanly(next);
  },
);

test(
  "a task cgroup in the daemon's own v1 folder is removed at its start, though the registry does not know it",
  { skip: V1_SKIP },
  async (t) => {
    const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-leftover-'));
    t.after(async () => {
      await removeDaemonV1Folders(daemonFolderName(stateDir));
      rmSync(stateDir, { recursive: true, force: true });
    });
    // As a crashed daemon whose registry was then set aside would have left it.
    const leftover = join(daemonV1Folder(stateDir, 'pids')!, 'task-left-by-a-crash');
    mkdirSync(leftover, { recursive: true });
    const daemon = await startTestDaemon(t, { containment: 'cgroup', stateDir });
    assert.equal(existsSync(leftover), false, 'the start removed it');
    await assertStopsCleanly(daemon);
  },
);

test(
  'a sandboxed task keeps its limits: a fork bomb stops at max_processes, and writes stay in its directory',
  { skip: V1_SKIP },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'hive-bash-limited-sandbox-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const daemon = await startTestDaemon(t, { containment: 'cgroup' });
    const tools = await connectClient(t, daemon.url);
    const command = `touch ${dir}/in /tmp/out-${daemon.marker} 2>/dev/null; for i in $(seq 40); do sleep 30 & done 2>/dev/null; wait`;
    const task = await tools.ok('run', {
      command,
      max_processes: 16,
      sandbox: { write: [dir], network: false },
      wait_seconds: 0,
    });
    const limited = await waitFor(
      async () => ((await tools.ok('status', { id: task.id })).pids_limit_hits ?? 0) > 0,
      30_000,
      100,
    );
    assert.ok(limited, 'forks past max_processes were refused');
    assert.ok(
      existsSync(join(dir, 'in')) && !existsSync(`/tmp/out-${daemon.marker}`),
      'writes stayed in its directory',
    );
    await tools.ok('kill', { id: task.id, force: true });
    assert.equal((await tools.ok('status', { id: task.id, wait_seconds: 30 })).state, 'killed');
    await assertStopsCleanly(daemon);
  },
);

test('bad limit values are refused naming the field', async (t) => {
  const { tools } = await setUp(t, 'cgroup');
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ memory_limit_mb: 0 }, '"memory_limit_mb" must be an integer of MiB from 1 to 4194304; got 0 (number)'],
    [{ memory_limit_mb: 1.5 }, '"memory_limit_mb" must be an integer of MiB from 1 to 4194304; got 1.5 (number)'],
    [{ memory_limit_mb: '512' }, '"memory_limit_mb" must be an integer of MiB from 1 to 4194304; got "512" (string)'],
    [{ max_processes: 0 }, '"max_processes" must be an integer from 1 to 4194304; got 0 (number)'],
    [{ cpu_limit: 0 }, '"cpu_limit" must be a number of CPUs from 0.01 to 1024; got 0 (number)'],
    [{ cpu_limit: 2000 }, '"cpu_limit" must be a number of CPUs from 0.01 to 1024; got 2000 (number)'],
  ];
  for (const [fields, message] of cases)
    assert.equal(await tools.error('run', { command: 'true', ...fields }), `Invalid run input: ${message}`);
});

test('a limit no cgroup can enforce is refused, never run without it', async (t) => {
  const { daemon, tools } = await setUp(t, 'node');
  const refused = await tools.call('run', { command: 'true', memory_limit_mb: 64 });
  assert.equal(refused.isError, true);
  assert.deepEqual(refused.structured.error, {
    code: 'ERR_LIMIT_UNAVAILABLE',
    message: `"memory_limit_mb" cannot be enforced here: it needs the memory cgroup controller, which cannot be used here: limits need the native spawner, whose shim puts a task in its cgroups; ${LIMITS_REMEDY}; nothing was started: run without memory_limit_mb. /healthz says where each controller is`,
  });
  const health = (await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as any;
  assert.match(health.limits.memory, /^unavailable: limits need the native spawner/);
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-no-limits-'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  const started = await runDaemonBinary([
    '--containment',
    'node',
    '--port',
    '0',
    '--state-dir',
    stateDir,
    '--task-max-processes',
    '10',
  ]);
  assert.equal(started.code, 2);
  assert.match(
    started.stderr,
    /--task-max-processes needs the pids cgroup controller, which cannot be used here: limits need the native spawner/,
  );
});

test('a default above its ceiling stops the start with exit code 2', async () => {
  const started = await runDaemonBinary(['--task-cpu-limit', '4', '--task-cpu-limit-ceiling', '2', '--port', '0']);
  assert.equal(started.code, 2);
  assert.equal(
    started.stderr,
    'hive-bash-daemon: --task-cpu-limit 4 is above --task-cpu-limit-ceiling 2; the default may not exceed the ceiling\n',
  );
});
