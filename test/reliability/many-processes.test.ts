// A task of thousands of idle processes, in process-group mode (no cgroup counts them): status and
// list read them a slice at a time, through the kernel's lists of children from the task's shim
// down, so the daemon goes on answering meanwhile. Before, each status read every process on the
// machine in one go, several times (figures, ports, what is left): with 15,000, `/healthz` waited
// 2 to 3.5 s. Full size (HIVE_BATTERY_FULL=1): 15,000 processes.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { batterySize, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { healthzDuring, latencyFigures } from '../helpers/stall.js';

const PROCESSES = batterySize(5000, 15_000);

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

test(
  `a task of ${PROCESSES} idle processes is counted while the daemon goes on answering (process-group mode)`,
  { timeout: 300_000 },
  async (t) => {
    const daemon = await startTestDaemon(t, { containment: 'process-group' });
    const session = await RawSession.open(daemon.url);
    const [started] = await session.all('run', [
      {
        command: `for i in $(seq ${PROCESSES}); do sleep 600 & done; echo started; wait`,
        name: 'crowd',
        wait_for: 'started',
        wait_seconds: 30,
        verbose: false,
      },
    ]);
    if (started.wait_result !== 'matched') {
      const [later] = await session.all('status', [{ id: 'crowd', wait_for: 'started', wait_seconds: 30 }]);
      assert.equal(later.wait_result, 'matched', 'the task started its processes');
    }
    const [shim] = pidsBelow(daemon.child.pid!).filter((pid) =>
      /\(hive-task-shim\)/.test(readFileSync(`/proc/${pid}/stat`, 'latin1')),
    );
    const pids = pidsBelow(shim!);
    assert.equal(pids.length, PROCESSES + 1, 'the leader and its sleeps');
    const oneGoMs = readInOneGo(pids);

    const status = await healthzDuring(daemon.origin, () => session.all('status', [{ id: 'crowd', verbose: true }]));
    assert.ok('value' in status.outcome, String((status.outcome as { error: unknown }).error));
    const list = await healthzDuring(daemon.origin, () => session.all('list', [{ state: 'running' }]));
    assert.ok('value' in list.outcome, String((list.outcome as { error: unknown }).error));
    const answered = [...status.answered, ...list.answered];
    // A read in one go holds the loop that long, once per read: status made two, list one. One
    // answer as slow may be the machine's (another test's burst); two or more are the daemon's.
    const slow = answered.filter((ms) => ms >= oneGoMs / 2);
    report(t, {
      processes: PROCESSES,
      one_go_ms: Math.round(oneGoMs),
      status_ms: Math.round(status.callMs),
      list_ms: Math.round(list.callMs),
      healthz_ms: latencyFigures(answered),
    });
    const [snapshot] = status.outcome.value;
    assert.equal(snapshot.processes, PROCESSES + 1, 'every process below the shim is counted');
    const [listed] = list.outcome.value;
    assert.equal(listed.tasks.find((row: { id: string }) => row.id === 'crowd').processes, PROCESSES + 1);
    assert.ok(
      slow.length <= 1,
      `/healthz waited ${slow.map(Math.round).join(', ')} ms; one read of the task's processes in one go takes ${Math.round(oneGoMs)} ms`,
    );
    await session.all('kill', [{ id: 'crowd', force: true }]);
    const [ended] = await session.all('status', [{ id: 'crowd', wait_seconds: 30, verbose: false }]);
    assert.equal(ended.state, 'killed');
  },
);
