// How a kill of a running task leaves the main thread: its worker is sent the kill, and a force kill
// in cgroup mode is also written to the task's cgroup.kill here, at once. The worker's side is a
// recorder: what it does with the message is tested end to end (test/containment/kill.test.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { HostSetup } from '../../src/process/containment.js';
import type { KillSignal } from '../../src/shared/signals.js';
import type { TaskRecord } from '../../src/supervisor/model/task.js';
import { createLiveTask, type LiveTask, type RunRequest } from '../../src/supervisor/tasks/live-task.js';
import { TaskControl } from '../../src/supervisor/tasks/task-control.js';
import type { TaskProbes } from '../../src/supervisor/tasks/task-probes.js';
import type { ControlMessage } from '../../src/workers/protocol.js';
import { createTestCgroupRoot, removeTestCgroupRoot } from '../helpers/cgroups.js';

const root = createTestCgroupRoot(`task-control-${process.pid}`);
after(async () => {
  if (root !== null) await removeTestCgroupRoot(root);
});
const skip = root === null ? 'no writable cgroup v2 here' : false;

/** Kills `runKey`'s running task with `signal` through a TaskControl on `root`; returns what its worker was sent. */
function killRunning(runKey: string, signal: KillSignal): { sent: ControlMessage[]; task: LiveTask } {
  const sent: ControlMessage[] = [];
  const record = { id: `task-${runKey}`, runKey, state: 'running' } as TaskRecord;
  const task = createLiveTask(record, { interactive: false } as RunRequest);
  task.worker = { send: (message) => void sent.push(message) };
  const hostSetup = { mode: 'cgroup', cgroupRoot: root } as HostSetup;
  new TaskControl({} as TaskProbes, hostSetup, 1000).kill(task, record, signal);
  return { sent, task };
}

test(
  'a force kill in cgroup mode is written to the cgroup by the main thread, and sent to the worker',
  { skip },
  async () => {
    const cgroup = join(root!, 'task-written');
    mkdirSync(cgroup);
    const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      sleeper.once('exit', (_code, signal) => resolve(signal)),
    );
    writeFileSync(join(cgroup, 'cgroup.procs'), String(sleeper.pid));
    const { sent, task } = killRunning('written', 'SIGKILL');
    assert.deepEqual(sent, [{ type: 'kill', signal: 'SIGKILL' }]);
    assert.equal(task.cgroupKilled, true, "an end by SIGKILL is the kill's");
    assert.equal(await exited, 'SIGKILL', "the cgroup's process was killed by the main thread's write");
  },
);

test("a kill with another signal is the worker's alone", { skip }, () => {
  const { sent, task } = killRunning('term', 'SIGTERM');
  assert.deepEqual(sent, [{ type: 'kill', signal: 'SIGTERM' }]);
  assert.equal(task.cgroupKilled, false);
  assert.notEqual(task.killedAt, null);
});
