// A task's states as the API names them, and which of them are final: the daemon's records and
// tools and hive-bash speak of tasks in these words.

export const TASK_STATES = ['pending', 'running', 'done', 'timed_out', 'killed', 'interrupted'] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** The states a task does not leave. */
export const FINISHED_STATES = ['done', 'timed_out', 'killed', 'interrupted'] as const satisfies readonly TaskState[];
export type FinishedState = (typeof FINISHED_STATES)[number];

const FINISHED = new Set<TaskState>(FINISHED_STATES);

/** Whether `state` is one a task does not leave. */
export function isFinished(state: TaskState): state is FinishedState {
  return FINISHED.has(state);
}
