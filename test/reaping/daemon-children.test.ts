// The daemon reaps every child it starts, whatever ended it: the spawner of a worker thread that
// stopped after its idle period, the tasks' init killed from outside, its outer process killed
// from outside. /healthz and /metrics count its children, so a leak would show there too.
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { nativeAddon } from '../../src/process/native.js';
import { countOwnChildren, listOwnChildren } from '../../src/process/process-table.js';
import { nativeContainment, startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

interface Child {
  pid: number;
  name: string;
  state: string;
}

/** The daemon's children (every thread's), as /proc shows them from outside. */
function childrenOf(pid: number): Child[] {
  const pids = readdirSync(`/proc/${pid}/task`).flatMap((thread) => {
    try {
      return readFileSync(`/proc/${pid}/task/${thread}/children`, 'latin1').trim().split(/\s+/).filter(Boolean);
    } catch {
      return [];
    }
  });
  return pids.flatMap((child) => {
    try {
      const stat = readFileSync(`/proc/${child}/stat`, 'latin1');
      const close = stat.lastIndexOf(')');
      return [{ pid: Number(child), name: stat.slice(stat.indexOf('(') + 1, close), state: stat[close + 2]! }];
    } catch {
      return [];
    }
  });
}

const describe = (children: Child[]) => children.map((child) => `${child.pid} ${child.name} ${child.state}`).join(', ');

async function health(daemon: TestDaemon): Promise<any> {
  return (await fetch(`${daemon.origin}/healthz`)).json();
}

/** Runs a short task to its end (which starts the worker thread and its spawner if they had stopped). */
async function runOne(client: ToolClient): Promise<void> {
  const result = await client.ok('run', { command: 'echo started', wait_seconds: 30 });
  assert.equal(result.state, 'done', JSON.stringify(result));
}

/**
 * Waits until the daemon has no child named `name` at all, live or zombie, and says what is left
 * if it does not come to that: an unreaped child stays a zombie for good.
 */
async function awaitNoChildNamed(daemon: TestDaemon, name: string, what: string): Promise<void> {
  const gone = await waitFor(() => !childrenOf(daemon.child.pid!).some((child) => child.name === name), 30_000);
  assert.ok(gone, `${what}: the daemon still has ${describe(childrenOf(daemon.child.pid!))}`);
}

function assertNoZombie(daemon: TestDaemon, what: string): void {
  const children = childrenOf(daemon.child.pid!);
  assert.deepEqual(
    children.filter((child) => child.state === 'Z'),
    [],
    `${what}: zombies among ${describe(children)}`,
  );
}

test('a worker thread stopped after its idle period leaves no zombie spawner, three times over', async (t) => {
  const daemon = await startTestDaemon(t, { containment: nativeContainment(), args: ['--worker-idle-seconds', '1'] });
  const client = await connectClient(t, daemon.url);
  for (let stop = 1; stop <= 3; stop++) {
    await runOne(client);
    assert.ok(
      childrenOf(daemon.child.pid!).some((child) => child.name === 'hive-task-spawn' && child.state !== 'Z'),
      `no spawner runs after a task: ${describe(childrenOf(daemon.child.pid!))}`,
    );
    // The MCP session's requests keep the threads up; only /healthz is read until they stop.
    assert.ok(await waitFor(async () => (await health(daemon)).worker_threads === 0, 30_000), 'the threads stopped');
    await awaitNoChildNamed(daemon, 'hive-task-spawn', `after idle stop ${stop}`);
    assertNoZombie(daemon, `after idle stop ${stop}`);
  }
  const counted = (await health(daemon)).children;
  assert.deepEqual(counted, { processes: childrenOf(daemon.child.pid!).length, zombies: 0 });
  const metrics = await (await fetch(`${daemon.origin}/metrics`)).text();
  assert.match(metrics, /^hive_bash_child_processes\{state="zombie"\} 0$/m);
  assert.match(metrics, new RegExp(`^hive_bash_child_processes\\{state="live"\\} ${counted.processes}$`, 'm'));
});

test("the tasks' init and its outer process killed from outside are reaped, and tasks run again", async (t) => {
  const daemon = await startTestDaemon(t, { containment: nativeContainment() });
  const namespace = (await health(daemon)).task_isolation.namespace;
  if (!namespace.in_force) return t.skip(`the tasks' namespace is not in force here: ${namespace.reason}`);
  const client = await connectClient(t, daemon.url);
  await runOne(client);
  const outerOf = () => childrenOf(daemon.child.pid!).find((child) => child.name === 'hive-task-init');
  const firstOuter = outerOf();
  assert.ok(firstOuter, `no hive-task-init among ${describe(childrenOf(daemon.child.pid!))}`);

  // The init (pid 1 inside) is the outer process's child; killed, the namespace is made anew.
  process.kill(namespace.init_pid, 'SIGKILL');
  const replaced = await waitFor(async () => {
    const now = (await health(daemon)).task_isolation.namespace;
    return now.in_force && now.init_pid !== namespace.init_pid ? now : null;
  }, 30_000);
  assert.ok(replaced, `no new init after the first was killed: ${daemon.stderr()}`);
  assert.ok(await waitFor(() => outerOf()?.pid !== firstOuter.pid, 30_000), 'the first outer process is gone');
  // The spawner that had joined the dead namespace exits too.
  await awaitNoChildNamed(daemon, 'hive-task-spawn', 'after the init was killed');
  assertNoZombie(daemon, 'after the init was killed');
  await runOne(client);

  // The outer process itself, killed: its init dies with it, and both are replaced again.
  const secondOuter = outerOf()!;
  process.kill(secondOuter.pid, 'SIGKILL');
  assert.ok(
    await waitFor(async () => {
      const now = (await health(daemon)).task_isolation.namespace;
      return now.in_force && now.init_pid !== replaced.init_pid && outerOf()?.pid !== secondOuter.pid;
    }, 30_000),
    `no new namespace after its outer process was killed: ${daemon.stderr()}`,
  );
  await awaitNoChildNamed(daemon, 'hive-task-spawn', 'after the outer process was killed');
  assertNoZombie(daemon, 'after the outer process was killed');
  await runOne(client);
  assertNoZombie(daemon, 'after a task in the third namespace');
  assert.equal((await health(daemon)).children.zombies, 0);
});

test('the count of its own children sees a child that exited and is not reaped yet as a zombie', async (t) => {
  const addon = nativeAddon();
  const devNull = openSync('/dev/null', 'r+');
  const { pid, pidfd } = addon.spawn({
    path: '/bin/true',
    argv: ['true'],
    env: [],
    cwd: '/',
    fds: [devNull, devNull, devNull],
  });
  closeSync(devNull);
  let reaped = false;
  t.after(() => {
    if (!reaped) addon.reap(pidfd, 1);
    addon.close(pidfd);
  });
  const zombie = await waitFor(() => listOwnChildren().find((child) => child.pid === pid && child.state === 'Z'));
  assert.ok(zombie, `the exited child ${pid} is not listed as a zombie: ${JSON.stringify(listOwnChildren())}`);
  assert.ok(countOwnChildren().zombies >= 1);
  addon.reap(pidfd, 1);
  reaped = true;
  assert.equal(
    listOwnChildren().find((child) => child.pid === pid),
    undefined,
    'reaped, it is no child any more',
  );
});
