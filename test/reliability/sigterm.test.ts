// SIGTERM to a daemon with many tasks running, a third of them ignoring SIGTERM: every task is
// ended within the kill grace, marked interrupted with its todo in the outbox, nothing of them is
// left alive, and the daemon exits 0.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { listTaskCgroups } from '../helpers/cgroups.js';
import { batterySize, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

const RUNNING = batterySize(100, 100);
const GRACE_MS = 500;
/** Past the grace, the daemon gives its workers this long to reap and report (src/supervisor/tasks/shutdown.ts). */
const REAP_MARGIN_MS = 2000;

const stubborn = (i: number) => i % 3 === 0;

test(`SIGTERM with ${RUNNING} tasks running ends them all within the grace, interrupted, their todos in the outbox, and exits 0`, async (t) => {
  const daemon = await startTestDaemon(t, {
    args: ['--kill-grace-ms', String(GRACE_MS), '--max-running', String(RUNNING + 16)],
  });
  const marker = `STOPPED=${daemon.marker}`;
  const session = await RawSession.open(daemon.url);
  const calls = Array.from({ length: RUNNING }, (_, i) => ({
    command: stubborn(i) ? "trap '' INT TERM; echo ready; sleep 600 & sleep 600" : 'sleep 600 & sleep 600',
    env: { STOPPED: daemon.marker },
    wait_seconds: 0,
  }));
  const ids: string[] = (await session.all('run', calls)).map((task) => task.id);
  const started = await waitFor(
    async () =>
      (
        await session.all(
          'status',
          ids.map((id) => ({ id, peek: true })),
        )
      ).every(
        (view, i) => view.state === 'running' && view.pid > 0 && (!stubborn(i) || view.stdout_tail === 'ready\n'),
      ),
    60_000,
    100,
  );
  assert.ok(started, `all ${RUNNING} are running, the stubborn ones past their trap`);
  // And their sleeps, or most of them: each task has bash and two once all have forked.
  assert.ok(
    await waitFor(() => findMarkedProcesses(marker).length >= 2 * RUNNING, 30_000),
    `their processes: ${findMarkedProcesses(marker).length}`,
  );

  const termAt = Date.now();
  const code = await daemon.stop();
  const exitedAt = Date.now();
  assert.equal(code, 0);
  assert.deepEqual(findMarkedProcesses(marker), [], 'nothing of the tasks outlives the daemon');
  if (daemon.cgroupRoot !== null) assert.deepEqual(listTaskCgroups(daemon.cgroupRoot), [], 'no task cgroup is left');

  const registry = new Database(join(daemon.stateDir, 'tasks.sqlite'), { readonly: true });
  t.after(() => registry.close());
  const rows = registry
    .prepare<[], { id: string; state: string; signal: string; exit_code: number; ended_at: number }>(
      'SELECT id, state, signal, exit_code, ended_at FROM tasks ORDER BY seq',
    )
    .all();
  assert.deepEqual(
    rows.map((row) => row.id),
    ids,
  );
  for (const [i, row] of rows.entries()) {
    // Ended by the stop's SIGTERM, or by the SIGKILL after the grace where it ignored SIGTERM.
    const signal = stubborn(i) ? 'SIGKILL' : 'SIGTERM';
    assert.deepEqual(
      [row.state, row.signal, row.exit_code],
      ['interrupted', signal, signal === 'SIGKILL' ? 137 : 143],
      row.id,
    );
    assert.ok(
      row.ended_at - termAt <= GRACE_MS + REAP_MARGIN_MS,
      `${row.id} ended ${row.ended_at - termAt} ms after SIGTERM`,
    );
  }
  const outbox = new Map(
    registry
      .prepare<[], { key: string; line: string }>('SELECT key, line FROM todo_outbox')
      .all()
      .map((row) => [row.key, JSON.parse(row.line)]),
  );
  assert.equal(outbox.size, RUNNING, 'one todo operation per task waits in the outbox');
  for (const [i, id] of ids.entries()) {
    const todo = outbox.get(id);
    assert.deepEqual([todo?.cmd, todo?.state], ['todo_upsert', 'interrupted'], id);
    assert.match(
      todo.summary,
      new RegExp(
        `^bash task ${id} interrupted: the daemon stopped while the task was running, ${stubborn(i) ? 'SIGKILL \\(exit 137\\)' : 'SIGTERM \\(exit 143\\)'} after `,
      ),
    );
  }
  const ended = rows.map((row) => row.ended_at - termAt);
  report(t, {
    test: 'sigterm',
    running: RUNNING,
    ignoring_sigterm: ids.filter((_, i) => stubborn(i)).length,
    kill_grace_ms: GRACE_MS,
    last_task_ended_after_sigterm_ms: Math.max(...ended),
    exit_after_sigterm_ms: exitedAt - termAt,
  });
});
