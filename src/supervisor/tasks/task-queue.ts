// Admission and the queue: tasks wait as pending, in arrival order, until one of --max-running
// slots is free; beyond --max-pending waiting ones, run is refused.
import { QueueFullError } from '../../errors.js';
import type { LiveTask } from './live-task.js';

export interface QueueLimits {
  maxRunning: number;
  maxPending: number;
}

export class TaskQueue {
  /** Pending tasks in arrival order (a Map keeps insertion order and deletes in O(1)). */
  private readonly waiting = new Map<string, LiveTask>();
  private slotsTaken = 0;

  constructor(private readonly limits: QueueLimits) {}

  /** Throws QueueFullError when both the slots and the queue are full. */
  assertRoom(): void {
    if (this.waiting.size >= this.limits.maxPending && this.slotsTaken >= this.limits.maxRunning) {
      throw new QueueFullError(this.limits.maxPending);
    }
  }

  /** Queues `task` (after assertRoom). */
  admit(task: LiveTask): void {
    this.waiting.set(task.record.id, task);
  }

  /** The next task to start, its slot taken; undefined while every slot is busy or nothing waits. */
  takeNext(): LiveTask | undefined {
    if (this.slotsTaken >= this.limits.maxRunning) return undefined;
    const next = this.waiting.values().next();
    if (next.done) return undefined;
    this.waiting.delete(next.value.record.id);
    this.slotsTaken++;
    return next.value;
  }

  /** A running task ended: its slot is free. */
  freeSlot(): void {
    this.slotsTaken--;
  }

  /** Takes a pending task out of the queue (cancelled); false when it was not waiting. */
  remove(id: string): boolean {
    return this.waiting.delete(id);
  }

  /** Empties the queue (a stop) and returns what waited. */
  drain(): LiveTask[] {
    const tasks = [...this.waiting.values()];
    this.waiting.clear();
    return tasks;
  }

  get pending(): number {
    return this.waiting.size;
  }

  /** Tasks holding a slot: dispatched to a worker (state running), started or not. */
  get running(): number {
    return this.slotsTaken;
  }
}
