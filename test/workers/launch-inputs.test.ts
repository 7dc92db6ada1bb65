// A running task's launch inputs (its command, `env` and `stdin` text, megabytes at most) are held
// only until its launch has used them: a task may run for days. Before, the pool's closures kept
// the whole spec on the main thread and the run kept it on the worker (piscina's worker holds the
// message that brought it, too): 64 running tasks with 1 MiB of `env` and of `stdin` each held about
// 250 MB. Each test runs a real bash that reads its stdin and then sleeps, and asks the garbage
// collector whether the spec's `env` object is still reachable.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MessageChannel } from 'node:worker_threads';
import { WorkerPool, type PoolReport } from '../../src/supervisor/tasks/worker-pool.js';
import type { ReportEnvelope, TaskSpec } from '../../src/workers/protocol.js';
import { TaskRun } from '../../src/workers/task-run.js';
import { withTimeout } from '../../src/with-timeout.js';
import { killMarkedProcesses, waitFor } from '../helpers/processes.js';
import { testTaskSpec } from '../helpers/task-spec.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** True once nothing holds what `ref` points to: collected within a few full collections. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let round = 0; round < 5 && ref.deref() !== undefined; round++) {
    await new Promise((resolve) => setImmediate(resolve)); // a WeakRef holds its target to the turn's end
    collectGarbage();
  }
  return ref.deref() === undefined;
}

/** A spec of a bash that reads 1 MiB of stdin, says so, then sleeps; its `env` has 1 MiB of its own. */
function readingSpec(t: TestContext, spawner: TaskSpec['spawner'] = 'node'): { spec: TaskSpec; marker: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hive-launch-inputs-'));
  const marker = `launch-inputs-${process.pid}-${dir.slice(-6)}`;
  t.after(async () => {
    await killMarkedProcesses(`HIVE_TEST_MARK=${marker}`);
    rmSync(dir, { recursive: true, force: true });
  });
  const big = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`BIG_${i}`, `${i}`.repeat(100 * 1024)]));
  const spec = testTaskSpec({
    taskId: 'inputs',
    runKey: marker,
    command: 'cat >/dev/null; echo read; exec sleep 300',
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HIVE_TEST_MARK: marker, ...big },
    stdin: 'z'.repeat(1024 * 1024),
    stdoutPath: join(dir, 'out'),
    stderrPath: join(dir, 'err'),
    spawner,
  });

  return { spec, marker };
}

for (const spawner of ['native', 'node'] as const)
  test(`a run lets go of its env and stdin once launched, though the spec it came in is held (${spawner} spawner)`, async (t) => {
    const { spec } = readingSpec(t, spawner);
    const env = new WeakRef(spec.env);
    const { port1, port2 } = new MessageChannel();
    const reports: ReportEnvelope['message'][] = [];
    port2.on('message', (envelope: ReportEnvelope) => reports.push(envelope.message));
    // As piscina's worker does, the test holds the spec for as long as the run lasts.
    const run = new TaskRun(spec, port1);
    const done = run.run();
    t.after(async () => {
      run.onControl({ type: 'kill', signal: 'SIGKILL' });
      await withTimeout(done, 10_000, undefined);
      port1.close();
      // The native spawner this thread started lives as long as the thread: this test's own child.
      if (spawner === 'native') spawnSync('pkill', ['-KILL', '-P', String(process.pid), '-x', 'hive-task-spawn']);
    });
    assert.ok(await waitFor(() => reports.some((report) => report.type === 'started'), 10_000), 'it started');
    assert.ok(await collected(env), 'the env is still held by the running task');
    assert.equal(spec.stdin, null, 'the spec piscina holds keeps no stdin text');
    assert.ok(spec.taskId === 'inputs' && spec.stdoutPath.endsWith('out'), 'the rest of the spec stays');
  });

test('the pool lets go of a running task spec once its worker has it', async (t) => {
  const pool = new WorkerPool(60_000);
  const reports: PoolReport[] = [];
  // The spec is made and handed over in a call of its own: this function's frame does not hold it.
  const { worker, held } = ((spec: TaskSpec) => ({
    worker: pool.dispatch(spec, (report) => reports.push(report)),
    held: new WeakRef(spec),
  }))(readingSpec(t).spec);
  const reported = (type: PoolReport['type']) => waitFor(() => reports.some((report) => report.type === type), 10_000);
  t.after(async () => {
    worker.send({ type: 'kill', signal: 'SIGKILL' });
    await reported('released');
    await pool.close();
  });
  assert.ok(await reported('started'), `it started: ${JSON.stringify(reports)}`);
  assert.ok(await collected(held), 'the main thread still holds the spec, with its env and stdin');
});
