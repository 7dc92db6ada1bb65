// What the task service tells the rest of the daemon as tasks change: each end (for the todo
// bookkeeping and retention), each lifecycle step (for the metrics), each replaced record.
import type { LifecycleEffects, LifecycleEvent } from '../model/lifecycle.js';
import type { TaskRecord } from '../model/task.js';

/** A task as a step left it: its record, and when a kill of it was first asked for (null: never). */
export interface SteppedTask {
  record: TaskRecord;
  killedAt: number | null;
}

type TransitionListener = (task: SteppedTask, event: LifecycleEvent, effects: LifecycleEffects) => void;

export class TaskEvents {
  private readonly ended: Array<(record: TaskRecord) => void> = [];
  private readonly transitions: TransitionListener[] = [];
  private readonly replaced: Array<() => void> = [];

  /** Called with each task's record when it reaches a finished state. */
  onTaskEnded(listener: (record: TaskRecord) => void): void {
    this.ended.push(listener);
  }

  /** Called after every event of a live task, with what it caused. */
  onTransition(listener: TransitionListener): void {
    this.transitions.push(listener);
  }

  /** Called when a run reuses the name of a finished task, whose record it replaces. */
  onTaskReplaced(listener: () => void): void {
    this.replaced.push(listener);
  }

  emitTransition(task: SteppedTask, event: LifecycleEvent, effects: LifecycleEffects): void {
    for (const listener of this.transitions) listener(task, event, effects);
    if (effects.finished) for (const listener of this.ended) listener(task.record);
  }

  emitReplaced(): void {
    for (const listener of this.replaced) listener();
  }
}
