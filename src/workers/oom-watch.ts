// Where a task's memory limit is a cgroup v1 one, which has no memory.oom.group: watches its OOM
// kill counter, so that the kernel killing one process of the task ends the whole task, as v2 does.
import type { LaunchedTask } from '../process/launched-task.js';

/** How often the counter is read: a few small reads a second, for memory-limited tasks on v1 only. */
const OOM_POLL_MS = 100;

/** Calls `onOomKill` once, at the first OOM kill seen in `launched`'s memory cgroup; returns the stop. */
export function watchOomKills(launched: LaunchedTask, onOomKill: () => void): () => void {
  const timer = setInterval(() => {
    if ((launched.limitFigures().oomKills ?? 0) === 0) return;
    clearInterval(timer);
    onOomKill();
  }, OOM_POLL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
