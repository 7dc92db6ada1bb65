// The daemon SIGKILLed among many running and finished tasks, then started again on the same
// state dir: the registry is intact, the running ones are interrupted with nothing of them left
// alive (no process, no cgroup), and the id counter goes on past every id it gave out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { listTaskCgroups } from '../helpers/cgroups.js';
import { batterySize, healthz, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

const RUNNING = batterySize(50, 200);
const FINISHED = batterySize(250, 1000);

/** What a restart may change in a running task's view: it ended. And what no two views of a task agree on. */
const ENDED_FIELDS = [
  'state',
  'error',
  'ended_at',
  'runtime_ms',
  'stdin_open',
  'cpu_ms',
  'memory_bytes',
  'memory_peak_bytes',
  'processes',
  'pids_limit_hits',
  'ports',
  'lingering',
];

function without(view: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(view).filter(([name]) => !fields.includes(name)));
}

test(`a daemon SIGKILLed among ${RUNNING} running and ${FINISHED} finished tasks restarts with every record intact, the running ones interrupted and nothing of them alive`, async (t) => {
  const began = Date.now();
  // Without the tasks' own namespace, whose init would take every task with it at the crash
  // (task-reach.test.ts): here the crash leaves processes for the next start to find and end.
  const args = [
    '--max-running',
    String(RUNNING + 16),
    '--retention-count',
    String(10 * (RUNNING + FINISHED)),
    '--task-namespace',
    'off',
  ];
  const first = await startTestDaemon(t, { args });
  const session = await RawSession.open(first.url);
  const marker = `BATTERY=${first.marker}`;

  const finishedCalls = Array.from({ length: FINISHED }, (_, i) => ({
    command: `echo "finished ${i}"; echo "err ${i}" >&2; exit $((${i} % 7))`,
    wait_seconds: 30,
  }));
  const finished = await session.all('run', finishedCalls);
  finished.forEach((task, i) =>
    assert.deepEqual(
      [task.state, task.exit_code, task.stdout_tail],
      ['done', i % 7, `finished ${i}\n`],
      `finished task ${i}`,
    ),
  );

  const runningCalls = Array.from({ length: RUNNING }, (_, i) => ({
    command: `echo "started ${i}"; sleep 600 & sleep 600`,
    env: { BATTERY: first.marker },
    wait_seconds: 0,
  }));
  const running: string[] = (await session.all('run', runningCalls)).map((task) => task.id);
  const ids = [...finished.map((task) => task.id as string), ...running];
  assert.equal(new Set(ids).size, ids.length, 'every generated id is distinct');
  const peek = (list: string[]) =>
    session.all(
      'status',
      list.map((id) => ({ id, peek: true })),
    );
  let before: any[] = [];
  const started = await waitFor(
    async () => {
      before = await peek(running);
      return before.every(
        (view, i) => view.state === 'running' && view.pid > 0 && view.stdout_tail === `started ${i}\n`,
      );
    },
    60_000,
    200,
  );
  assert.ok(
    started,
    `all ${RUNNING} started: ${before.filter((view) => view.state === 'running' && view.pid > 0).length} running`,
  );
  const finishedBefore = await peek(finished.map((task) => task.id));
  const loaded = Date.now();

  await first.crash();
  // The leaders die with the daemon; the background sleeps are left for the next start to find.
  const left = await waitFor(
    () => findMarkedProcesses(marker).length >= RUNNING && findMarkedProcesses(marker).length,
    10_000,
  );
  assert.ok(left, 'the tasks left processes the dead daemon could not end');

  const restartedAt = Date.now();
  const second = await startTestDaemon(t, { stateDir: first.stateDir, args, env: { HIVE_TEST_MARK: first.marker } });
  const listening = Date.now();
  assert.ok(
    await waitFor(() => findMarkedProcesses(marker).length === 0, 30_000),
    `left alive: ${findMarkedProcesses(marker).length}`,
  );
  const cleanedAt = Date.now();
  if (second.cgroupRoot !== null) assert.deepEqual(listTaskCgroups(second.cgroupRoot), [], 'no task cgroup is left');
  const again = await RawSession.open(second.url);
  const peekAgain = (list: string[]) =>
    again.all(
      'status',
      list.map((id) => ({ id, peek: true })),
    );

  const finishedAfter = await peekAgain(finished.map((task) => task.id));
  finishedAfter.forEach((view, i) =>
    assert.deepEqual(
      without(view, ['lingering']),
      without(finishedBefore[i], ['lingering']),
      `finished task ${view.id} is as it was`,
    ),
  );
  const after = await peekAgain(running);
  after.forEach((view, i) => {
    assert.equal(view.state, 'interrupted', view.id);
    assert.equal(view.error, 'the daemon stopped while the task was running', view.id);
    assert.ok(Date.parse(view.ended_at) >= Date.parse(view.started_at), `${view.id} ended after it started`);
    assert.equal(view.lingering, 0, `${view.id} has nothing left`);
    assert.deepEqual(
      without(view, ENDED_FIELDS),
      without(before[i], ENDED_FIELDS),
      `${view.id} is otherwise as it was`,
    );
  });
  const counts = (await healthz(second.origin)).tasks;
  assert.deepEqual([counts.done, counts.interrupted, counts.running, counts.pending], [FINISHED, RUNNING, 0, 0]);
  const metrics = await (await fetch(`${second.origin}/metrics`)).text();
  assert.match(
    metrics,
    new RegExp(`^hive_bash_tasks_interrupted_at_start ${RUNNING}$`, 'm'),
    'the alert has its cause',
  );

  const fresh = await again.all('run', [{ command: 'echo fresh', wait_seconds: 30 }]);
  assert.equal(fresh[0].stdout_tail, 'fresh\n');
  assert.ok(!ids.includes(fresh[0].id), `the id generated after the restart, ${fresh[0].id}, is new`);
  assert.equal(fresh[0].id, `task-${ids.length + 1}`, 'the counter goes on where it was');
  report(t, {
    test: 'restart',
    running: RUNNING,
    finished: FINISHED,
    load_ms: loaded - began,
    left_by_crash: left,
    restart_to_listening_ms: listening - restartedAt,
    restart_to_none_lingering_ms: cleanedAt - restartedAt,
  });
});
