// A task of thousands of idle processes, in process-group mode (no cgroup counts them): status and
// list read them a slice at a time, through the kernel's lists of children from the task's shim
// down, so the daemon goes on answering meanwhile. Before, each status read every process on the
// machine in one go, several times (figures, ports, what is left): with 15,000, `/healthz` waited
// 2 to 3.5 s. A process's threads each have their list of children, read one a step too (10,000
// threads held /healthz 120 to 300 ms a status before). Full size (HIVE_BATTERY_FULL=1): 15,000
// processes, 18,000 threads.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { test, type TestContext } from 'node:test';
import { batterySize, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { processRoom } from '../helpers/processes.js';
import { healthzDuring, latencyFigures } from '../helpers/stall.js';

const PROCESSES = batterySize(5000, 15_000);
const THREADS = batterySize(10_000, 18_000);

/** What reading the task's processes in one go costs this machine now: each one's stat and children files. */
function readInOneGo(pids: number[]): number {
  const started = performance.now();
  for (const pid of pids) {
    readFileSync(`/proc/${pid}/stat`);
    for (const thread of readdirSync(`/proc/${pid}/task`)) readFileSync(`/proc/${pid}/task/${thread}/children`);
  }
  return performance.now() - started;
}

/** The pids below `root`, from the kernel's lists of children (every thread's). */
function pidsBelow(root: number): number[] {
  const found: number[] = [];
  for (let level = [root]; level.length > 0;) {
    const next: number[] = [];
    for (const pid of level)
      for (const thread of readdirSync(`/proc/${pid}/task`)) {
        let children = '';
        try {
          children = readFileSync(`/proc/${pid}/task/${thread}/children`, 'latin1').trim();
        } catch {
          // the thread ended meanwhile
        }
        if (children !== '') next.push(...children.split(' ').map(Number));
      }
    found.push(...next);
    level = next;
  }
  return found;
}

/** Processes a daemon and its test need besides the crowd: its threads, shims, helpers. */
const BESIDES = 500;

/** False where this machine lets the test start `count` more processes or threads; else why not (a skip). */
function roomFor(count: number): false | string {
  const room = processRoom();
  return room >= count + BESIDES
    ? false
    : `needs room for ${count + BESIDES} processes; the pids cgroup here allows ${room} more`;
}

/** Runs `command` (with `env`) as task `name`, waiting until it prints "started"; the pids below its shim. */
async function startCrowd(
  daemon: TestDaemon,
  session: RawSession,
  name: string,
  command: string,
  env: Record<string, string> = {},
): Promise<number[]> {
  const [started] = await session.all('run', [
    { command, name, env, wait_for: 'started', wait_seconds: 30, verbose: false },
  ]);
  if (started.wait_result !== 'matched') {
    const [later] = await session.all('status', [{ id: name, wait_for: 'started', wait_seconds: 30 }]);
    assert.equal(later.wait_result, 'matched', 'the task started its processes');
  }
  const [shim] = pidsBelow(daemon.child.pid!).filter((pid) =>
    /\(hive-task-shim\)/.test(readFileSync(`/proc/${pid}/stat`, 'latin1')),
  );
  return pidsBelow(shim!);
}

/**
 * A status and a list of task `name` with /healthz asked meanwhile; fails unless /healthz answered
 * three times during each, or on two answers that waited half of `oneGoMs` or more: a read in one go holds the loop that long once per read (status
 * made two, list one), and one such answer may be the machine's (another test's burst).
 */
async function statusAndList(t: TestContext, daemon: TestDaemon, session: RawSession, name: string, oneGoMs: number) {
  const status = await healthzDuring(daemon.origin, () => session.all('status', [{ id: name, verbose: true }]));
  assert.ok('value' in status.outcome, String((status.outcome as { error: unknown }).error));
  const list = await healthzDuring(daemon.origin, () => session.all('list', [{ state: 'running' }]));
  assert.ok('value' in list.outcome, String((list.outcome as { error: unknown }).error));
  // Proven by order first: a loop held for the whole call answers nothing before the call does.
  assert.ok(
    status.answered.length >= 3 && list.answered.length >= 3,
    `/healthz answered ${status.answered.length} times during the status, ${list.answered.length} during the list`,
  );
  const answered = [...status.answered, ...list.answered];
  const slow = answered.filter((ms) => ms >= oneGoMs / 2);
  report(t, {
    one_go_ms: Math.round(oneGoMs),
    status_ms: Math.round(status.callMs),
    list_ms: Math.round(list.callMs),
    healthz_ms: latencyFigures(answered),
  });
  assert.ok(
    slow.length <= 1,
    `/healthz waited ${slow.map(Math.round).join(', ')} ms; one read of the task's processes in one go takes ${Math.round(oneGoMs)} ms`,
  );
  const [snapshot] = status.outcome.value;
  const [listed] = list.outcome.value;
  return { snapshot, row: listed.tasks.find((row: { id: string }) => row.id === name) };
}

test(
  `a task of ${PROCESSES} idle processes is counted while the daemon goes on answering (process-group mode)`,
  { timeout: 300_000, skip: roomFor(PROCESSES) },
  async (t) => {
    const daemon = await startTestDaemon(t, { containment: 'process-group' });
    const session = await RawSession.open(daemon.url);
    const pids = await startCrowd(
      daemon,
      session,
      'crowd',
      `for i in $(seq ${PROCESSES}); do sleep 600 & done; echo started; wait`,
    );
    assert.equal(pids.length, PROCESSES + 1, 'the leader and its sleeps');
    const { snapshot, row } = await statusAndList(t, daemon, session, 'crowd', readInOneGo(pids));
    assert.equal(snapshot.processes, PROCESSES + 1, 'every process below the shim is counted');
    assert.equal(row.processes, PROCESSES + 1);
    await session.all('kill', [{ id: 'crowd', force: true }]);
    const [ended] = await session.all('status', [{ id: 'crowd', wait_seconds: 30, verbose: false }]);
    assert.equal(ended.state, 'killed');
  },
);

test(
  `a process of ${THREADS} threads is read a thread at a time (process-group mode)`,
  { timeout: 300_000, skip: roomFor(THREADS) },
  async (t) => {
    const daemon = await startTestDaemon(t, { containment: 'process-group' });
    const session = await RawSession.open(daemon.url);
    const program = [
      'import threading',
      'threading.stack_size(64 * 1024)',
      'held = threading.Event()',
      `for _ in range(${THREADS}): threading.Thread(target=held.wait, daemon=True).start()`,
      "print('started', flush=True)",
      'held.wait()',
    ].join('\n');
    const [leader] = await startCrowd(daemon, session, 'threads', `exec python3 -c "$PROGRAM"`, { PROGRAM: program });
    assert.ok(readdirSync(`/proc/${leader}/task`).length > THREADS, 'the threads run');
    const { snapshot } = await statusAndList(t, daemon, session, 'threads', readInOneGo([leader!]));
    assert.equal(snapshot.processes, 1);
    await session.all('kill', [{ id: 'threads', force: true }]);
  },
);
