// A daemon's stop, for its tasks: pending ones are dropped, running ones ended within the grace
// period and marked interrupted, and no task cgroup is left behind.
import { allTaskCgroupDirs, type Containment } from '../../process/containment.js';
import { removeTaskCgroupDirs } from '../../process/task-cgroups.js';
import { STOPPED_WHILE_RUNNING, type LifecycleEvent } from '../model/lifecycle.js';
import type { LiveTask } from './live-task.js';
import { within } from '../../within.js';

/** Margin past the grace period for the workers to reap and report. */
const REAP_MARGIN_MS = 2000;

export interface ShutdownHost {
  readonly live: ReadonlyMap<string, LiveTask>;
  readonly containment: Containment;
  readonly killGraceMs: number;
  /** From here every task that ends, ends as interrupted; returns what was still pending. */
  beginStop(): LiveTask[];
  apply(task: LiveTask, event: LifecycleEvent): void;
}

/** Ends every task for a stop: pending ones now, running ones (and finished ones' leftovers) by their workers. */
export async function interruptAll(host: ShutdownHost): Promise<void> {
  for (const task of host.beginStop()) {
    host.apply(task, { type: 'interrupted', error: 'the daemon stopped before the task started', endedAt: Date.now() });
  }
  // Running tasks, and finished ones whose leftovers the workers still hold.
  const dispatched = [...host.live.values()].filter((task) => task.worker !== null);
  for (const task of dispatched) task.worker!.send({ type: 'kill', signal: 'SIGTERM' });
  // The workers escalate to SIGKILL after the grace period and then remove the tasks' cgroups.
  await within(
    Promise.all(dispatched.map((task) => task.released.reached)),
    host.killGraceMs + REAP_MARGIN_MS,
    undefined,
  );
  for (const task of dispatched) {
    if (task.record.state === 'running')
      host.apply(task, { type: 'interrupted', error: STOPPED_WHILE_RUNNING, endedAt: Date.now() });
  }
}

/**
 * After the workers are gone: removes the cgroups of tasks they did not release in time (killing
 * what is left in them), so a stop leaves no task cgroup behind.
 */
export async function removeUnreleasedCgroups(host: ShutdownHost): Promise<void> {
  await removeTaskCgroupDirs(
    [...host.live.values()].flatMap((task) => allTaskCgroupDirs(host.containment, task.record.runKey)),
  );
}
