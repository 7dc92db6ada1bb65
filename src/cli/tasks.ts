// The daemon's task fields as the CLI reads them (list items, status results), and how a task's
// end is waited for: status with wait_seconds, in a loop, never a tight poll.
import type { DaemonClient } from './client.js';
import { MAX_WAIT_SECONDS } from '../shared/tool-bounds.js';
import { isFinished, type TaskState } from '../shared/task-states.js';
import type { TaskSnapshot } from '../shared/task-snapshot.js';

export { MAX_WAIT_SECONDS } from '../shared/tool-bounds.js';

/** A list item: a member that is null is absent, as are the operator fields on daemons without them. */
export interface TaskItem {
  id: string;
  name?: string | null;
  state: TaskState;
  command: string;
  started_at?: string | null;
  runtime_ms?: number | null;
  exit_code?: number | null;
  created_at?: string | null;
  ended_at?: string | null;
  signal?: string | null;
  pty?: boolean;
  cpu_ms?: number | null;
  memory_bytes?: number | null;
  processes?: number | null;
}

/** A status result: the daemon's snapshot of a task (one definition, src/shared/task-snapshot.ts). */
export type TaskStatus = TaskSnapshot & Record<string, unknown>;

/** A task's status now. */
export function fetchStatus(client: DaemonClient, id: string, tailBytes?: number): Promise<TaskStatus> {
  // peek: the operator's reads leave a finished task's todo for the agent; verbose: every field.
  return client.callTool<TaskStatus>('status', {
    id,
    peek: true,
    verbose: true,
    ...(tailBytes === undefined ? {} : { tail_bytes: tailBytes }),
  });
}

/**
 * Waits, in status calls of at most 30 s, until task `id` has finished or `deadline` (epoch ms)
 * passes, or `signal` aborts; returns its last status.
 */
export async function waitForEnd(
  client: DaemonClient,
  id: string,
  deadline: number | null,
  signal?: AbortSignal,
): Promise<TaskStatus> {
  for (;;) {
    const left = deadline === null ? MAX_WAIT_SECONDS : Math.max(0, (deadline - Date.now()) / 1000);
    const status = await client.callTool<TaskStatus>('status', {
      id,
      peek: true,
      verbose: true,
      wait_seconds: Math.min(MAX_WAIT_SECONDS, Math.round(left * 1000) / 1000),
      tail_bytes: 0,
    });
    if (isFinished(status.state) || signal?.aborted || (deadline !== null && Date.now() >= deadline)) return status;
  }
}
