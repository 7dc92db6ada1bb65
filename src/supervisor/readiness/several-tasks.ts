// status of several tasks at once: one call waits until the first of them ends, or all of them,
// so an agent waiting on a build and its tests makes one call, not a loop.
import { isFinished } from '../../shared/task-states.js';
import type { TaskService } from '../tasks/task-service.js';
import { withTimeout } from '../../with-timeout.js';

export const MAX_STATUS_IDS = 100;

/** Waits up to `seconds` until `any` one or `all` of tasks `ids` have finished; every id must name a task. */
export async function awaitTasks(
  tasks: TaskService,
  ids: string[],
  wait: 'any' | 'all',
  seconds: number,
): Promise<{ result: 'ended' | 'timeout'; endedIds: string[] }> {
  for (const id of ids) tasks.get(id); // an unknown id is refused before any wait
  const pending = [...new Set(ids)].flatMap((id) => {
    return isFinished(tasks.get(id).state) ? [] : [tasks.whenEnded(id)];
  });
  const done = () => ids.filter((id) => isFinished(tasks.get(id).state));
  const satisfied = () => (wait === 'all' ? done().length === ids.length : done().length > 0);
  if (!satisfied() && seconds > 0 && pending.length > 0) {
    await withTimeout<unknown, undefined>(
      wait === 'all' ? Promise.all(pending) : Promise.race(pending),
      seconds * 1000,
      undefined,
    );
  }
  return { result: satisfied() ? 'ended' : 'timeout', endedIds: [...new Set(done())] };
}
