// The same battery against a daemon wherever it was started (test/helpers/environments.ts): it runs
// a task; a kill ends a setsid'd and double-forked tree; a task's `kill -9 -1`, `pkill -f node` and
// `rm -rf` of the state dir leave it serving with every record kept; a sandboxed run is confined, or
// refused naming what is missing; a limit works, or is refused with its own code; 20 tasks leave no
// zombie; a client in another PID namespace is served, a task's call whose socket is in flight is
// not taken for an outside one, and no task may trace the tasks' init. The daemon runs with --tasks-may-call off, so that a call a
// task makes is refused (403) where an outside one is served.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { readProcessEntry } from '../../src/process/process-table.js';
import type { EnvDaemon } from '../helpers/environments.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, killMarkedCommand, waitFor } from '../helpers/processes.js';

export const BATTERY_ARGS = ['--tasks-may-call', 'off'];
const CLI = new URL('../../src/cli/main.js', import.meta.url).pathname;
const IN_FLIGHT = new URL('../../../test/environments/fixtures/in-flight.py', import.meta.url).pathname;
/** Longer than the kill's grace period (5 s): what a kill ends is gone by then. */
const KILL_BOUND_MS = 30_000;

/** Runs the battery, and says in the test's output what holds where (the table of docs/containment.md). */
export async function runBattery(t: TestContext, daemon: EnvDaemon): Promise<void> {
  const tools = await connectClient(t, daemon.url);
  const health = await healthOf(daemon);
  const { namespace } = health.task_isolation;
  t.diagnostic(
    `${daemon.env}: namespace ${namespace.in_force ? 'in force' : 'missing'}, mounts locked ${namespace.mounts_locked}, own /proc ${namespace.own_proc}; sandbox ${health.sandbox.isolation.startsWith('unavailable') ? health.sandbox.isolation : 'works'}; limits ${JSON.stringify(health.limits)}; containment ${health.containment.mode}`,
  );
  assertPromisesSaid(daemon, health);
  const kept = await tools.ok('run', { name: 'kept', command: 'echo hi', wait_seconds: 30 });
  assert.deepEqual([kept.state, kept.exit_code, kept.stdout_tail], ['done', 0, 'hi\n']);
  await assertTreeKilled(tools, daemon);
  await assertReachSurvived(tools, daemon);
  await assertSandbox(tools, daemon, health.sandbox.isolation);
  await assertLimit(tools, health.limits.memory);
  await assertNoZombies(tools, daemon);
  await assertInFlightRefused(tools, daemon);
  if (namespace.in_force) await assertInitUntraceable(tools);
  if (!daemon.env.startsWith('podman')) assertServedFromAnotherPidNamespace(daemon);
}

/** `PTRACE_ATTACH` of pid 1, the tasks' init in their namespace: prints `attach RESULT ERRNO`. */
const ATTACH_INIT = `python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); print("attach", libc.ptrace(16, 1, 0, 0), ctypes.get_errno())'`;

/**
 * No task may trace the tasks' init (through it a task would start what no exec filter, cgroup or
 * shim of a task holds, and stop its ending of orphans): EPERM, the init not dumpable.
 */
async function assertInitUntraceable(tools: ToolClient): Promise<void> {
  const traced = await tools.ok('run', { command: ATTACH_INIT, wait_seconds: 30 });
  assert.equal(traced.stdout_tail, 'attach -1 1\n', JSON.stringify(traced));
}

/** Each promise that /healthz says does not hold here has its warn-level line in the log. */
function assertPromisesSaid(daemon: EnvDaemon, health: any): void {
  const said = daemon.stderr();
  const expect = (unheld: boolean, line: string) =>
    assert.equal(unheld, said.includes(`"level":40,`) && said.includes(line), `warned "${line}": ${unheld}\n${said}`);
  const { namespace } = health.task_isolation;
  expect(!namespace.in_force, 'tasks can reach the daemon');
  expect(namespace.in_force && !namespace.own_proc, 'tasks see processes outside their namespace');
  expect(health.sandbox.isolation.startsWith('unavailable'), 'no run can be sandboxed here');
  expect(
    Object.values(health.limits).some((place) => (place as string).startsWith('unavailable')),
    'no limit of these can be enforced here',
  );
}

async function healthOf(daemon: EnvDaemon): Promise<any> {
  return (await fetch(new URL('/healthz', daemon.url))).json();
}

/** A kill ends the leader, a setsid'd sleep and a double-forked one: none of them is left. */
async function assertTreeKilled(tools: ToolClient, daemon: EnvDaemon): Promise<void> {
  const tree = await tools.ok('run', {
    command: 'setsid sleep 600 & (sleep 600 &); echo started; sleep 600',
    wait_for: 'started',
    wait_seconds: 30,
  });
  assert.equal(tree.wait_result, 'matched');
  await tools.ok('kill', { id: tree.id });
  await tools.statusWhen(
    tree.id,
    (view) => view.state === 'killed' && view.lingering === 0,
    'the tree ended',
    KILL_BOUND_MS,
  );
  const sleeps = () =>
    findMarkedProcesses(`HIVE_TEST_MARK=${daemon.marker}`).filter((pid) => readProcessEntry(pid)?.name === 'sleep');
  assert.deepEqual(
    await waitFor(() => (sleeps().length === 0 ? [] : null), KILL_BOUND_MS),
    [],
    'no sleep of the tree is left',
  );
}

/** An agent's habits aimed at the daemon leave it serving, and the task it ran before as it was. */
async function assertReachSurvived(tools: ToolClient, daemon: EnvDaemon): Promise<void> {
  const before = await tools.ok('status', { id: 'kept' });
  // `pkill -f node` aimed at this test's own processes alone (see killMarkedCommand).
  const pkillNode = killMarkedCommand('TERM', 'node', `HIVE_TEST_MARK=${daemon.marker}`, 'command line');
  for (const habit of ['kill -9 -1', pkillNode, `rm -rf ${daemon.innerStateDir}/* ${daemon.innerStateDir}`]) {
    await tools.ok('run', { command: `${habit}; echo survived`, wait_seconds: 30 });
    assert.equal((await healthOf(daemon)).ok, true, `the daemon serves after ${habit}`);
  }
  const after = await tools.ok('status', { id: 'kept' });
  assert.deepEqual(
    [after.state, after.exit_code, after.stdout_tail],
    [before.state, before.exit_code, before.stdout_tail],
  );
}

/** A sandboxed run writes only in its write dir, changes no metadata outside, reaches no network; or is refused saying why. */
async function assertSandbox(tools: ToolClient, daemon: EnvDaemon, isolation: string): Promise<void> {
  const outside = daemon.env.startsWith('podman')
    ? '/run/outside'
    : join(daemon.scratch, '..', `hive-outside-${daemon.marker}`);
  const port = new URL(daemon.url).port;
  const command = [
    `touch ${daemon.scratch}/inside && echo inside`,
    `touch ${outside} 2>/dev/null || echo outside-refused`,
    'chmod 777 /etc/hostname 2>/dev/null || echo chmod-refused',
    `(exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null && echo reached || echo network-refused`,
  ].join('; ');
  const sandbox = { write: [daemon.scratch], network: false };
  const answer = await tools.call('run', { command, sandbox, wait_seconds: 30 });
  if (isolation.startsWith('unavailable: ')) {
    assert.equal(answer.structured.error?.code, 'ERR_SANDBOX_UNAVAILABLE', answer.text);
    assert.ok(answer.text.includes(isolation.slice('unavailable: '.length)), answer.text);
    return;
  }
  assert.equal(answer.structured.stdout_tail, 'inside\noutside-refused\nchmod-refused\nnetwork-refused\n', answer.text);
  const made = await tools.ok('run', { command: `test -e ${outside} && echo made || echo absent`, wait_seconds: 30 });
  assert.equal(made.stdout_tail, 'absent\n');
}

/** A memory limit is in force, or refused with ERR_LIMIT_UNAVAILABLE naming why (as /healthz does). */
async function assertLimit(tools: ToolClient, memory: string): Promise<void> {
  const answer = await tools.call('run', { command: 'true', memory_limit_mb: 64, wait_seconds: 30 });
  if (memory.startsWith('unavailable: ')) {
    assert.equal(answer.structured.error?.code, 'ERR_LIMIT_UNAVAILABLE', answer.text);
    assert.ok(answer.text.includes(memory.slice('unavailable: '.length)), answer.text);
    return;
  }
  assert.equal(answer.structured.limits?.memory_limit_mb, 64, answer.text);
}

/** 20 tasks that leave orphans behind leave no zombie anywhere in the daemon's tree. */
async function assertNoZombies(tools: ToolClient, daemon: EnvDaemon): Promise<void> {
  for (let i = 0; i < 20; i++)
    await tools.ok('run', { command: '(sleep 0.1 &); setsid true & exit 0', wait_seconds: 30 });
  const zombies = () => descendants(daemon.topPid()).filter((pid) => readProcessEntry(pid)?.state === 'Z');
  assert.deepEqual(
    await waitFor(() => (zombies().length === 0 ? [] : null), 10_000),
    [],
    `zombies: ${zombies().join(' ')}`,
  );
}

/** Every process under `top`, `top` itself included, as this host sees them. */
function descendants(top: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    const entry = /^\d+$/.test(name) ? readProcessEntry(Number(name)) : null;
    if (entry !== null) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry.pid]);
  }
  const found = [top];
  for (let at = 0; at < found.length; at++) found.push(...(children.get(found[at]!) ?? []));
  return found;
}

/** A task's call whose socket no process holds is taken as a task's (refused under off), never an outside one. */
async function assertInFlightRefused(tools: ToolClient, daemon: EnvDaemon): Promise<void> {
  const port = new URL(daemon.url).port;
  const answer = await tools.ok('run', { command: `python3 ${IN_FLIGHT} ${port}`, wait_seconds: 30 });
  assert.equal(answer.stdout_tail, 'HTTP/1.1 403 Forbidden\n', JSON.stringify(answer));
}

/** A client in a PID namespace of its own is served. */
function assertServedFromAnotherPidNamespace(daemon: EnvDaemon): void {
  const output = execFileSync(
    'unshare',
    [
      '--pid',
      '--fork',
      '--mount-proc',
      process.execPath,
      CLI,
      '--url',
      daemon.url,
      'run',
      '--wait',
      '30',
      '--',
      'echo',
      'outside',
    ],
    { encoding: 'utf8' },
  );
  assert.match(output, /\noutside\n/);
}
