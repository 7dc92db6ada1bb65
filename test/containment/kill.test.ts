// Kills reach every descendant of a task, in each containment the daemon can run in. What a mode
// cannot promise is stated where it is skipped: Node's spawn (no addon) has only the process
// group, so a descendant that calls setsid is out of its reach.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { startTestDaemon, type TestContainment } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

const GRACE_MS = 1000;
/** Time the daemon gets beyond the grace period to have nothing left. */
const SETTLE_MS = 3000;

/** Each command, and how many of its processes run once it has started (the shim aside). */
const ESCAPES: Array<{ name: string; command: string; processes: number; leavesGroup: boolean }> = [
  { name: 'a plain child', command: 'sleep 300; true', processes: 2, leavesGroup: false },
  { name: 'a child started with setsid', command: 'setsid sleep 300 & sleep 300', processes: 3, leavesGroup: true },
  { name: 'a double fork', command: '(sleep 300 &); sleep 300', processes: 2, leavesGroup: false },
  {
    name: 'nohup setsid bash -c with its own jobs',
    command: "nohup setsid bash -c 'sleep 300 & sleep 300' > /dev/null 2>&1 & sleep 300",
    processes: 5,
    leavesGroup: true,
  },
  {
    name: 'a double fork that calls setsid',
    command: '(setsid sleep 300 &); sleep 300',
    processes: 2,
    leavesGroup: true,
  },
];

/**
 * What status gives as cpu_ms: while a task runs, an integer of milliseconds in every containment
 * (its cgroup's count, else its processes' from /proc); once it has ended, the whole count where a
 * cgroup or the shim kept it, and null under Node's spawn, where nothing outlives the leader to keep it.
 */
function assertCpuMs(containment: TestContainment, cpuMs: unknown, what: 'running' | 'ended'): void {
  if (what === 'ended' && containment === 'node')
    assert.equal(cpuMs, null, `ended: under Node's spawn nothing keeps the CPU time`);
  else
    assert.ok(
      Number.isInteger(cpuMs) && (cpuMs as number) >= 0,
      `${what}: cpu_ms ${String(cpuMs)} is the CPU time the task used (${containment})`,
    );
}

/** A daemon in `containment`, a client, and a marker `VARIABLE=<unique>` to give a task's env. */
async function setUp(
  t: TestContext,
  containment: TestContainment,
  variable: string,
  args = ['--kill-grace-ms', String(GRACE_MS)],
) {
  const daemon = await startTestDaemon(t, { containment, args });
  const tools = await connectClient(t, daemon.url);
  return { daemon, tools, marker: `${variable}=${daemon.marker}`, env: { [variable]: daemon.marker } };
}

for (const containment of ['cgroup', 'process-group', 'node'] as TestContainment[]) {
  describe(`containment ${containment}`, () => {
    for (const escape of ESCAPES) {
      const unreachable = containment === 'node' && escape.leavesGroup;
      test(
        `kill ends ${escape.name}`,
        { skip: unreachable && 'Node spawn has only the process group: setsid leaves it' },
        async (t) => {
          const { tools, marker, env } = await setUp(t, containment, 'VICTIM');
          const task = await tools.ok('run', { command: escape.command, env, wait_seconds: 0 });
          assert.ok(
            await waitFor(() => findMarkedProcesses(marker).length >= escape.processes, 5000),
            `started: ${findMarkedProcesses(marker).length}`,
          );
          const sent = Date.now();
          await tools.ok('kill', { id: task.id });
          assert.ok(
            await waitFor(() => findMarkedProcesses(marker, true).length === 0, GRACE_MS + SETTLE_MS),
            `left: ${findMarkedProcesses(marker, true)}`,
          );
          assert.ok(Date.now() - sent < GRACE_MS + SETTLE_MS);
          const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
          assert.equal(ended.state, 'killed');
          assert.equal(ended.lingering, 0);
        },
      );
    }

    test('kill ends a pty task and the & and setsid children that hold its terminal', async (t) => {
      const { tools, marker, env } = await setUp(t, containment, 'PTY_VICTIM');
      // Node's spawn has only the process group, which setsid leaves: there the children stay in it.
      const command =
        containment === 'node'
          ? 'sleep 300 & (sleep 300 &); wait'
          : 'sleep 300 & setsid sleep 300 & (setsid bash -c "sleep 300 & wait" &); wait';
      const processes = containment === 'node' ? 3 : 5;
      const task = await tools.ok('run', { command, env, pty: true, wait_seconds: 0 });
      assert.ok(
        await waitFor(() => findMarkedProcesses(marker).length >= processes, 5000),
        `started: ${findMarkedProcesses(marker).length}`,
      );
      await tools.ok('kill', { id: task.id });
      assert.ok(
        await waitFor(() => findMarkedProcesses(marker, true).length === 0, GRACE_MS + SETTLE_MS),
        `left: ${findMarkedProcesses(marker, true)}`,
      );
      const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
      assert.equal(ended.state, 'killed');
      assert.equal(ended.pty, true);
      assert.equal(ended.lingering, 0);
    });

    test('kill of a storm of 300 background jobs that ignore SIGINT leaves nothing', async (t) => {
      const { tools, marker, env } = await setUp(t, containment, 'STORM');
      const task = await tools.ok('run', {
        command: 'for i in $(seq 300); do sleep 300 & done; wait',
        env,
        wait_seconds: 0,
      });
      assert.ok(await waitFor(() => findMarkedProcesses(marker).length >= 301, 20_000), 'all jobs started');
      await tools.ok('kill', { id: task.id });
      assert.ok(
        await waitFor(() => findMarkedProcesses(marker, true).length === 0, GRACE_MS + SETTLE_MS + 5000),
        `left: ${findMarkedProcesses(marker, true).length}`,
      );
      assert.equal((await tools.ok('status', { id: task.id, wait_seconds: 10 })).state, 'killed');
    });

    test(
      'a finished task whose setsid grandchild lives is done, lingering, and kill ends the grandchild',
      { skip: containment === 'node' && 'Node spawn cannot see past the process group' },
      async (t) => {
        const { tools, marker, env } = await setUp(t, containment, 'LINGER');
        const task = await tools.ok('run', {
          command: 'setsid sleep 300 > /dev/null 2>&1 & echo started',
          env,
          wait_seconds: 10,
        });
        assert.equal(task.state, 'done');
        assert.equal(task.exit_code, 0);
        assert.ok(task.lingering >= 1, `lingering ${task.lingering}`);
        assert.ok(await waitFor(() => findMarkedProcesses(marker).length === 1), 'the grandchild lives');
        const killed = await tools.ok('kill', { id: task.id });
        assert.equal(killed.signal, 'SIGINT');
        assert.ok(
          await waitFor(() => findMarkedProcesses(marker, true).length === 0, GRACE_MS + SETTLE_MS),
          'the grandchild (and the shim) are gone',
        );
        const after = await tools.ok('status', { id: task.id });
        assert.equal(after.state, 'done', 'killing lingering processes does not change how the task ended');
        assert.equal(after.lingering, 0);
      },
    );

    test('after the daemon is SIGKILLed, the next start ends what its tasks left and marks them interrupted', async (t) => {
      const first = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, first.url);
      const marker = `CRASH=${first.marker}`;
      const command = containment === 'node' ? 'sleep 300 & sleep 300' : 'setsid sleep 300 & sleep 300 & sleep 300';
      await tools.ok('run', { command, name: 'running', env: { CRASH: first.marker }, wait_seconds: 0.3 });
      await tools.ok('run', {
        command: containment === 'node' ? 'sleep 300 & echo left' : 'setsid sleep 300 & echo left',
        name: 'lingering',
        env: { CRASH: first.marker },
        wait_seconds: 10,
      });
      assert.ok(await waitFor(() => findMarkedProcesses(marker).length >= 3, 15_000));
      await first.crash();
      const second = await startTestDaemon(t, {
        containment,
        stateDir: first.stateDir,
        env: { HIVE_TEST_MARK: first.marker },
      });
      assert.ok(
        await waitFor(() => findMarkedProcesses(marker, true).length === 0, 5000),
        `left: ${findMarkedProcesses(marker, true)}`,
      );
      const again = await connectClient(t, second.url);
      assert.equal((await again.ok('status', { id: 'running' })).state, 'interrupted');
      assert.equal(
        (await again.ok('status', { id: 'lingering' })).state,
        'done',
        'a task that had ended keeps its end',
      );
    });

    test('a kill right after run reaches the task, however early it arrives', async (t) => {
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      for (let round = 0; round < 10; round++) {
        const task = await tools.ok('run', { command: 'sleep 60; echo finished', wait_seconds: 0 });
        await tools.ok('kill', { id: task.id, force: true });
        const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
        assert.equal(ended.state, 'killed', `round ${round}`);
        assert.equal(ended.stdout_tail, '', `round ${round}: the command was stopped before it finished`);
        // A kill that arrives before the worker reports the start leaves no start time, and so no runtime.
        if (ended.started_at === null) assert.equal(ended.runtime_ms, null, `round ${round}`);
        else
          assert.ok(
            Number.isInteger(ended.runtime_ms) && ended.runtime_ms < 60_000,
            `round ${round}: runtime ${ended.runtime_ms}: ended by the kill, not its sleep`,
          );
      }
    });

    test(
      'a task that signals its own process group cannot take its shim with it',
      { skip: containment === 'node' && 'Node spawn has no shim' },
      async (t) => {
        const { tools, marker, env } = await setUp(t, containment, 'SELF');
        const task = await tools.ok('run', {
          command: 'setsid sleep 300 & sleep 0.2; kill -USR1 0',
          env,
          wait_seconds: 10,
        });
        assert.equal(task.state, 'done');
        assert.equal(task.signal, 'SIGUSR1');
        assert.equal(task.lingering, 1, 'the shim still holds the setsid sleep');
        await tools.ok('kill', { id: task.id, force: true });
        assert.ok(
          await waitFor(() => findMarkedProcesses(marker, true).length === 0, 5000),
          `left: ${findMarkedProcesses(marker, true)}`,
        );
      },
    );

    test(
      'if a task kills its shim, what the shim held is killed too',
      { skip: containment === 'node' && 'Node spawn has no shim' },
      async (t) => {
        const { tools, marker, env } = await setUp(t, containment, 'ORPHANED');
        const task = await tools.ok('run', {
          command: 'setsid sleep 300 & sleep 300 & sleep 0.2; kill -9 $PPID; sleep 300',
          env,
          wait_seconds: 10,
        });
        assert.equal(task.state, 'done');
        assert.equal(task.exit_code, null);
        assert.equal(task.error, 'the task ended without reporting its exit (its shim was killed)');
        assert.ok(
          await waitFor(() => findMarkedProcesses(marker, true).length === 0, 5000),
          `left: ${findMarkedProcesses(marker, true)}`,
        );
      },
    );

    test(
      'if a task kills its shim and goes on forking, what it forked meanwhile is killed too',
      { skip: containment === 'node' && 'Node spawn has no shim' },
      async (t) => {
        const { tools, marker, env } = await setUp(t, containment, 'FORKING');
        // Each `setsid sleep` leaves the group: only the passes by run marker find it, and those
        // forked after a pass listed /proc only the next pass does. Four loops, to fork often.
        const task = await tools.ok('run', {
          command: 'sleep 0.2; kill -9 $PPID; for i in 1 2 3 4; do while :; do setsid sleep 300 & done & done; wait',
          env,
          wait_seconds: 10,
        });
        assert.equal(task.error, 'the task ended without reporting its exit (its shim was killed)');
        assert.ok(
          await waitFor(() => findMarkedProcesses(marker, true).length === 0, 5000),
          `left: ${findMarkedProcesses(marker, true)}`,
        );
      },
    );

    test(
      'if the spawners die, their tasks end with nothing left and the next run starts a new one',
      { skip: containment === 'node' && 'Node spawn has no spawner' },
      async (t) => {
        const { daemon, tools, marker, env } = await setUp(t, containment, 'SPAWNER_GONE');
        const task = await tools.ok('run', { command: 'setsid sleep 300 & sleep 300', env, wait_seconds: 0 });
        assert.ok(await waitFor(() => findMarkedProcesses(marker).length >= 3, 5000), 'started');
        const spawners = execFileSync('pgrep', ['-P', String(daemon.child.pid), '-x', 'hive-task-spawn'], {
          encoding: 'utf8',
        })
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map(Number);
        assert.ok(
          spawners.length > 0 && spawners.every((pid) => pid > 1),
          `the worker threads have spawners: ${spawners}`,
        );
        for (const pid of spawners) process.kill(pid, 'SIGKILL');
        const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
        assert.equal(ended.state, 'done');
        assert.equal(ended.error, 'the task ended without reporting its exit (its shim was killed)');
        assert.ok(
          await waitFor(() => findMarkedProcesses(marker, true).length === 0, 5000),
          `left: ${findMarkedProcesses(marker, true)}`,
        );
        const next = await tools.ok('run', { command: 'echo after', wait_seconds: 10 });
        assert.equal(next.stdout_tail, 'after\n');
      },
    );

    test('status gives cpu_ms as this containment measures it, while the task runs and once it has ended', async (t) => {
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const task = await tools.ok('run', {
        command: 'echo ready; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 300',
        wait_seconds: 0,
      });
      // Its output reaches the file (the shim writes it) before the daemon hears of its start, and
      // with no cgroup its figures are read through the shim's pid, which comes with the start.
      assert.ok(
        await waitFor(async () => {
          const view = await tools.ok('status', { id: task.id });
          return view.stdout_tail === 'ready\n' && view.pid !== null;
        }),
        'the task has started',
      );
      const running = await tools.ok('status', { id: task.id });
      assert.equal(running.state, 'running');
      assertCpuMs(daemon.containment, running.cpu_ms, 'running');
      await tools.ok('kill', { id: task.id, force: true });
      assert.equal((await tools.ok('status', { id: task.id, wait_seconds: 10 })).state, 'killed');
      // The figures are final once the worker has let go of the task (processes 0).
      const ended = await tools.statusWhen(task.id, (view) => view.processes === 0, 'the task was released', 10_000);
      assertCpuMs(daemon.containment, ended.cpu_ms, 'ended');
      if (daemon.containment !== 'node')
        assert.ok(ended.cpu_ms > 0, `the busy loop used CPU time: cpu_ms ${ended.cpu_ms}`);
    });

    test('a task that burns CPU and memory shows cpu_ms and memory_bytes growing', async (t) => {
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const go = join(daemon.scratch, 'grow');
      // Pages it touches over and over: memory left idle can be reclaimed on these machines (their RSS falls).
      const grow =
        'import time\nb = bytearray(64 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint("grown", flush=True)\nwhile True:\n    for i in range(0, len(b), 4096): b[i] = 1\n    time.sleep(0.02)\n';
      const command = `echo ready; while [ ! -e ${go} ]; do sleep 0.02; done; exec python3 -c "$GROW"`;
      const task = await tools.ok('run', { command, env: { GROW: grow }, wait_seconds: 0 });
      assert.ok(
        await waitFor(async () => (await tools.ok('status', { id: task.id })).stdout_tail === 'ready\n'),
        'the task has started',
      );
      const before = await tools.ok('status', { id: task.id });
      assert.ok(
        Number.isInteger(before.memory_bytes) && before.memory_bytes > 0,
        `memory_bytes ${before.memory_bytes} before`,
      );
      assert.ok(before.memory_bytes < 32_000_000, `memory_bytes ${before.memory_bytes} before it grew`);
      assert.ok(before.processes >= 1, `processes ${before.processes}`);
      writeFileSync(go, '');
      assert.ok(
        await waitFor(async () => (await tools.ok('status', { id: task.id })).stdout_tail.endsWith('grown\n'), 60_000),
        'the task grew',
      );
      const after = await tools.ok('status', { id: task.id });
      assert.ok(
        after.memory_bytes >= before.memory_bytes + 50_000_000,
        `memory_bytes ${before.memory_bytes} -> ${after.memory_bytes}: it holds 64 MB more`,
      );
      assert.ok(after.cpu_ms > before.cpu_ms, `cpu_ms ${before.cpu_ms} -> ${after.cpu_ms}`);
      const listed = (await tools.ok('list', { state: 'running' })).tasks.find((row: any) => row.id === task.id);
      assert.ok(
        listed.memory_bytes >= 50_000_000 && listed.cpu_ms >= before.cpu_ms && listed.processes >= 1,
        `list shows the figures: ${JSON.stringify(listed)}`,
      );
      await tools.ok('kill', { id: task.id, force: true });
    });

    test('force kills of many tasks at once end each as killed by SIGKILL, its end reported by its shim', async (t) => {
      // In cgroup mode the daemon writes each one's cgroup.kill itself as the kill comes, so most
      // tasks end before their worker writes the kill to their shim, which has exited by then.
      const { tools, marker, env } = await setUp(t, containment, 'FORCED');
      const tasks = await Promise.all(
        Array.from({ length: 20 }, () => tools.ok('run', { command: 'sleep 300', env, wait_seconds: 0 })),
      );
      assert.ok(
        await waitFor(() => findMarkedProcesses(marker).length >= tasks.length, 20_000),
        `started: ${findMarkedProcesses(marker).length}`,
      );
      await Promise.all(tasks.map((task) => tools.ok('kill', { id: task.id, force: true })));
      const ended = await Promise.all(tasks.map((task) => tools.ok('status', { id: task.id, wait_seconds: 10 })));
      assert.deepEqual(
        ended.filter((view) => view.state !== 'killed' || view.signal !== 'SIGKILL' || view.error !== null),
        [],
        'each ended killed by SIGKILL, with no error',
      );
      assert.ok(await waitFor(() => findMarkedProcesses(marker, true).length === 0, SETTLE_MS), 'nothing is left');
    });

    test('a kill for a task with nothing left signals nothing', async (t) => {
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const task = await tools.ok('run', { command: 'true' });
      // A bystander that would report any signal it gets, then `fence` once the test says so: a
      // signal sent before that is reported before it (bash runs a trap before its next test).
      const go = join(daemon.scratch, `go-${task.id}`);
      t.after(() => rmSync(go, { force: true }));
      const bystander = await tools.ok('run', {
        command: `trap 'echo got INT' INT; trap 'echo got TERM' TERM; echo ready; while [ ! -e ${go} ]; do sleep 0.05; done; echo fence; exec sleep 600`,
        wait_for: '^ready$',
        wait_seconds: 30,
      });
      assert.equal(bystander.stdout_tail, 'ready\n');
      for (const signal of ['SIGINT', 'SIGTERM', 'SIGKILL']) {
        const killed = await tools.ok('kill', { id: task.id, signal });
        assert.equal('signal' in killed, false, 'no signal was sent: the result leaves signal out');
        assert.equal(killed.message, `task ${task.id} had already finished (done) and nothing of it is left running`);
      }
      writeFileSync(go, '');
      const still = await tools.ok('status', { id: bystander.id, wait_for: '^fence$', wait_seconds: 30 });
      assert.equal(still.state, 'running');
      assert.equal(still.stdout_tail, 'ready\nfence\n', 'the bystander got no signal');
      await tools.ok('kill', { id: bystander.id, force: true });
    });
  });
}

test(
  'in cgroup mode a task reports its CPU time and processes, and its cgroup is removed once it ends',
  { skip: false },
  async (t) => {
    const daemon = await startTestDaemon(t, { containment: 'cgroup' });
    if (daemon.cgroupRoot === null) return t.skip('no writable cgroup v2 here');
    const tools = await connectClient(t, daemon.url);
    const { listTaskCgroups } = await import('../helpers/cgroups.js');
    const task = await tools.ok('run', {
      command: 'sleep 300 & sleep 300 & i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; wait',
      wait_seconds: 0.5,
    });
    // On a loaded machine run's wait can end before the task's three processes are up.
    const running = await tools.statusWhen(task.id, (view) => view.processes === 3, 'its three processes are up');
    assert.equal(listTaskCgroups(daemon.cgroupRoot).length, 1);
    assertCpuMs('cgroup', running.cpu_ms, 'running');
    assert.ok(running.memory_bytes > 0, `memory_bytes ${running.memory_bytes}`);
    const busy = await tools.ok('status', { id: task.id, wait_seconds: 5 });
    assert.ok(busy.cpu_ms > 0, `cpu_ms ${busy.cpu_ms}`);
    await tools.ok('kill', { id: task.id, force: true });
    const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
    assert.equal(ended.state, 'killed');
    assert.ok(await waitFor(() => listTaskCgroups(daemon.cgroupRoot!).length === 0, 5000), 'the cgroup was removed');
    // The worker removes the cgroup, then lets go of the task: from then on the figures are the final ones.
    const final = await tools.statusWhen(
      task.id,
      (view) => view.processes === 0,
      'the task was released with no process left',
      10_000,
    );
    assert.ok(Number.isInteger(final.cpu_ms) && final.cpu_ms > 0, `cpu_ms ${final.cpu_ms}`);
  },
);
