// A daemon's stop, for its tasks: what the service does with each (task-service.ts `stop`) and the
// wait for the workers to end them: running ones get SIGTERM, SIGKILL after the grace period, and
// are released within it and a margin; no task cgroup is left behind.
import { allTaskCgroupDirs, type HostSetup } from '../../process/containment.js';
import { removeTaskCgroupDirs } from '../../process/task-cgroups.js';
import type { LiveTask } from './live-task.js';
import { withTimeout } from '../../with-timeout.js';

/** Margin past the grace period for the workers to reap and report. */
const REAP_MARGIN_MS = 2000;

/** Has the workers end `dispatched` (running tasks, and finished ones whose processes linger); waits for their release, within the grace period and a margin. */
export async function endDispatched(dispatched: LiveTask[], killGraceMs: number): Promise<void> {
  for (const task of dispatched) task.worker!.send({ type: 'kill', signal: 'SIGTERM' });
  // The workers escalate to SIGKILL after the grace period and then remove the tasks' cgroups.
  await withTimeout(
    Promise.all(dispatched.map((task) => task.released.reached)),
    killGraceMs + REAP_MARGIN_MS,
    undefined,
  );
}

/** Removes the cgroups of `tasks` (killing what is left in them): those the workers did not release in time. */
export async function removeCgroupsOf(tasks: Iterable<LiveTask>, hostSetup: HostSetup): Promise<void> {
  await removeTaskCgroupDirs([...tasks].flatMap((task) => allTaskCgroupDirs(hostSetup, task.record.runKey)));
}
