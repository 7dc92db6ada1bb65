// What a hostile tester found a task could do to a shim, each a test in both native containments:
// a task that stopped its own shim (SIGSTOP, which no process can block) hung its run's answer and
// outlived its kill and timeout, with its end never told; a shim stuck where no signal but SIGKILL
// moves it (here frozen in a cgroup, as in the kernel on a task's userfaultfd page) did not end
// its task on a force kill; a task whose leader exited by itself just before a kill reached
// its shim was told as killed, with the leader's own exit code; and a task that killed its own shim
// left a process of a session of its own, with no environment to be known by, running for good.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { writableCgroup2Mount } from '../helpers/cgroups.js';
import { startTestDaemon, type TestContainment } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';
import { withTimeout } from '../../src/with-timeout.js';

const GRACE_MS = 1000;
/** How long past its wait_seconds a run's answer may take; before the fix it never came. */
const ANSWER_SLACK_MS = 5000;
/** How long a killed task may take to be told ended and have nothing left. */
const END_MS = 15_000;

async function setUp(t: TestContext, containment: TestContainment) {
  const daemon = await startTestDaemon(t, { containment, args: ['--kill-grace-ms', String(GRACE_MS)] });
  const tools = await connectClient(t, daemon.url);
  const left = (word: string) =>
    findMarkedProcesses(`HIVE_TEST_MARK=${daemon.marker}`).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(word),
    );
  return { daemon, tools, left };
}

/** The parent of `pid` as /proc tells it: a task leader's is its shim. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** The state letter of `pid` (Z for a zombie), or null once it is reaped. */
function stateOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.charAt(stat.lastIndexOf(')') + 2);
  } catch {
    return null;
  }
}

/**
 * Moves `pid` into a cgroup of the test's own and freezes it there: no signal but SIGKILL moves it
 * then. Returns the thaw; the teardown thaws, moves what is left back and removes the cgroup.
 */
function freeze(t: TestContext, mount: string, pid: number): () => void {
  const home = join(mount, readFileSync(`/proc/${pid}/cgroup`, 'latin1').match(/^0::(.*)$/m)![1]!);
  const dir = join(mount, 'hive-bash-test', `frozen-${process.pid}-${pid}`);
  mkdirSync(dir, { recursive: true });
  const thaw = () => writeFileSync(join(dir, 'cgroup.freeze'), '0');
  t.after(async () => {
    thaw();
    for (const left of readFileSync(join(dir, 'cgroup.procs'), 'latin1').split('\n').filter(Boolean)) {
      try {
        writeFileSync(join(home, 'cgroup.procs'), left);
      } catch {
        // gone meanwhile
      }
    }
    await waitFor(() => {
      try {
        rmdirSync(dir);
      } catch {
        // a process is still leaving
      }
      return !existsSync(dir);
    });
  });
  writeFileSync(join(dir, 'cgroup.procs'), String(pid));
  writeFileSync(join(dir, 'cgroup.freeze'), '1');
  return thaw;
}

/** Living processes whose command line is `words` (a process that cleared its environment has no marker). */
function processesRunning(words: string[]): number[] {
  const wanted = `${words.join('\0')}\0`;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid)
    .filter((name) => {
      try {
        return (
          readFileSync(`/proc/${name}/cmdline`, 'latin1') === wanted && !['Z', null].includes(stateOf(Number(name)))
        );
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** Waits for task `id` to be told ended in `state`, and returns its view. */
function endedAs(tools: ToolClient, id: string, state: string): Promise<any> {
  return tools
    .statusWhen(id, (view) => view.state !== 'running', `${id} is told ended`, END_MS)
    .then((view) => {
      assert.equal(view.state, state, JSON.stringify(view));
      return view;
    });
}

/** The daemon's spawners (one per worker thread that started a task): its children of that name. */
function spawnersOf(daemonPid: number): number[] {
  const children = readdirSync(`/proc/${daemonPid}/task`).flatMap((thread) =>
    readFileSync(`/proc/${daemonPid}/task/${thread}/children`, 'latin1').split(' ').filter(Boolean).map(Number),
  );
  return children.filter((pid) => readFileSync(`/proc/${pid}/comm`, 'latin1').startsWith('hive-task-spawn'));
}

for (const containment of ['cgroup', 'process-group'] as const) {
  describe(`stuck shims (${containment})`, () => {
    test('a task that stops its own shim: its run answers on time, and its kill and timeout end it', async (t) => {
      const { daemon, tools, left } = await setUp(t, containment);
      if (containment === 'cgroup' && daemon.cgroupRoot === null) return t.skip('cgroups are not writable here');
      const command = (seconds: number) => `trap "" INT TERM HUP QUIT; kill -STOP $PPID; exec sleep ${seconds}`;
      const begun = Date.now();
      const run = await withTimeout(
        tools.ok('run', { command: command(7101), wait_seconds: 2 }),
        2000 + ANSWER_SLACK_MS,
        null,
      );
      assert.ok(run !== null, `run answered within ${2000 + ANSWER_SLACK_MS} ms (took ${Date.now() - begun} ms)`);
      await waitFor(() => left('7101').length === 1);
      await tools.ok('kill', { id: run.id });
      await endedAs(tools, run.id, 'killed');
      assert.deepEqual(await waitFor(() => (left('7101').length === 0 ? [] : null), END_MS), [], 'the sleep is gone');
      const timed = await tools.ok('run', { command: command(7102), timeout_seconds: 1, wait_seconds: 0 });
      await endedAs(tools, timed.id, 'timed_out');
      assert.deepEqual(await waitFor(() => (left('7102').length === 0 ? [] : null), END_MS), [], 'the sleep is gone');
    });

    // With one worker thread (two cores) every run goes to the stopped spawner; with more, a run
    // may go to another thread's, and this passes either way.
    test("a run answers on time while an operator has stopped the tasks' spawner", async (t) => {
      const { daemon, tools } = await setUp(t, containment);
      if (containment === 'cgroup' && daemon.cgroupRoot === null) return t.skip('cgroups are not writable here');
      await tools.ok('run', { command: 'true', wait_seconds: 30 });
      const spawners = spawnersOf(daemon.child.pid!);
      assert.ok(spawners.length > 0, 'the daemon has a spawner');
      t.after(() => spawners.forEach((pid) => process.kill(pid, 'SIGCONT')));
      for (const pid of spawners) process.kill(pid, 'SIGSTOP');
      await waitFor(() => spawners.every((pid) => stateOf(pid) === 'T'));
      const run = await withTimeout(
        tools.ok('run', { command: 'echo late', wait_seconds: 1 }),
        1000 + ANSWER_SLACK_MS,
        null,
      );
      assert.ok(run !== null, `run answered within ${1000 + ANSWER_SLACK_MS} ms`);
      for (const pid of spawners) process.kill(pid, 'SIGCONT');
      await endedAs(tools, run.id, 'done');
    });

    test('a kill continues a stopped shim while its spawner is stopped too', async (t) => {
      const { daemon, tools, left } = await setUp(t, containment);
      if (containment === 'cgroup' && daemon.cgroupRoot === null) return t.skip('cgroups are not writable here');
      const flag = join(daemon.scratch, `stop-${Date.now()}`);
      t.after(() => rmSync(flag, { force: true }));
      const run = await tools.ok('run', {
        command: `trap "" INT TERM HUP QUIT; while [ ! -e ${flag} ]; do sleep 0.02; done; kill -STOP $PPID; exec sleep 7104`,
        wait_seconds: 0,
      });
      const view = await tools.statusWhen(run.id, (status) => status.pid !== null, 'the task started');
      const spawners = spawnersOf(daemon.child.pid!);
      t.after(() => spawners.forEach((pid) => process.kill(pid, 'SIGCONT')));
      for (const pid of spawners) process.kill(pid, 'SIGSTOP');
      await waitFor(() => spawners.every((pid) => stateOf(pid) === 'T'));
      writeFileSync(flag, '');
      const shim = parentOf(view.pid);
      assert.equal(
        await waitFor(() => stateOf(shim) === 'T' && left('7104').length === 1, END_MS),
        true,
        'the shim stopped',
      );
      await tools.ok('kill', { id: run.id });
      // Ended by its shim, not without it: the daemon's SIGCONT reached the shim.
      const ended = await endedAs(tools, run.id, 'killed');
      assert.equal(ended.error, null);
      assert.deepEqual(await waitFor(() => (left('7104').length === 0 ? [] : null), END_MS), [], 'the sleep is gone');
    });

    test('a force kill ends a task whose shim is stuck, and its end is told', async (t) => {
      const { daemon, tools, left } = await setUp(t, containment);
      const mount = writableCgroup2Mount();
      if (mount === null || (containment === 'cgroup' && daemon.cgroupRoot === null))
        return t.skip('cgroups are not writable here');
      const run = await tools.ok('run', { command: 'trap "" INT TERM HUP QUIT; exec sleep 7103', wait_seconds: 0 });
      const view = await tools.statusWhen(run.id, (status) => status.pid !== null, 'the task started');
      freeze(t, mount, parentOf(view.pid));
      await tools.ok('kill', { id: run.id, force: true });
      const ended = await endedAs(tools, run.id, 'killed');
      assert.match(ended.error, /its shim did not end it, and was killed/);
      assert.deepEqual(await waitFor(() => (left('7103').length === 0 ? [] : null), END_MS), [], 'the sleep is gone');
    });

    test('a task that kills its own shim leaves nothing, a process of its own session with no environment included', async (t) => {
      const { daemon, tools } = await setUp(t, containment);
      if (containment === 'cgroup' && daemon.cgroupRoot === null) return t.skip('cgroups are not writable here');
      const sleep = ['sleep', `7105.${process.pid}`];
      t.after(() => processesRunning(sleep).forEach((pid) => process.kill(pid, 'SIGKILL')));
      const run = await tools.ok('run', {
        command: `setsid env -i ${sleep.join(' ')} & while ! pgrep -f '^${sleep.join(' ')}$' >/dev/null; do sleep 0.02; done; kill -9 $PPID; sleep 7106`,
        wait_seconds: 0,
      });
      await tools.statusWhen(run.id, (view) => view.state !== 'running', `${run.id} is told ended`, END_MS);
      assert.deepEqual(
        await waitFor(() => (processesRunning(sleep).length === 0 ? [] : null), END_MS),
        [],
        `nothing of ${sleep.join(' ')} is left`,
      );
    });

    test('a kill that reaches the shim after its leader exited by itself leaves the task done', async (t) => {
      const { daemon, tools } = await setUp(t, containment);
      const mount = writableCgroup2Mount();
      if (mount === null || (containment === 'cgroup' && daemon.cgroupRoot === null))
        return t.skip('cgroups are not writable here');
      const flag = join(daemon.scratch, `go-${Date.now()}`);
      t.after(() => rmSync(flag, { force: true }));
      const run = await tools.ok('run', {
        command: `while [ ! -e ${flag} ]; do sleep 0.02; done; exit 0`,
        wait_seconds: 0,
      });
      const view = await tools.statusWhen(run.id, (status) => status.pid !== null, 'the task started');
      const thaw = freeze(t, mount, parentOf(view.pid));
      writeFileSync(flag, '');
      assert.equal(await waitFor(() => stateOf(view.pid) === 'Z', END_MS), true, 'the leader exited');
      const kill = await tools.ok('kill', { id: run.id });
      assert.equal(kill.state, 'running');
      thaw();
      const ended = await endedAs(tools, run.id, 'done');
      assert.equal(ended.exit_code, 0);
      assert.equal(ended.signal, null);
    });
  });
}
