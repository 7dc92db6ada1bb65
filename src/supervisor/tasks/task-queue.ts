// Admission and the queue: tasks wait as pending, in arrival order, until one of --max-running
// slots is free; beyond --max-pending waiting ones, or --max-pending-bytes of what they hold, run
// is refused.
import { QueueFullError } from '../../errors.js';
import type { LiveTask, RunRequest } from './live-task.js';

export interface QueueLimits {
  maxRunning: number;
  maxPending: number;
  maxPendingBytes: number;
}

/**
 * The bytes a pending run holds in memory until it is dispatched: its command, stdin, cwd, name,
 * environment and sandbox's write folders (UTF-8, at least what each string takes in V8's heap;
 * the folders twice, as asked and as resolved).
 */
export function pendingBytesOf(request: RunRequest): number {
  let bytes = Buffer.byteLength(request.command) + Buffer.byteLength(request.cwd);
  if (request.stdin !== null) bytes += Buffer.byteLength(request.stdin);
  if (request.name !== null) bytes += Buffer.byteLength(request.name);
  for (const [name, value] of Object.entries(request.env)) bytes += name.length + Buffer.byteLength(value);
  for (const dir of request.sandbox?.write ?? []) bytes += 2 * Buffer.byteLength(dir);
  return bytes;
}

export class TaskQueue {
  /** Pending tasks in arrival order, with the bytes each holds (a Map keeps insertion order and deletes in O(1)). */
  private readonly waiting = new Map<string, { task: LiveTask; bytes: number }>();
  private slotsTaken = 0;
  private bytesHeld = 0;

  constructor(private readonly limits: QueueLimits) {}

  /** Throws QueueFullError when every slot is taken and the queue has no room for a run holding `bytes`. */
  assertRoom(bytes: number): void {
    if (this.slotsTaken < this.limits.maxRunning) return;
    const { maxPending, maxPendingBytes } = this.limits;
    if (this.waiting.size >= maxPending) throw new QueueFullError({ maxPending });
    if (this.bytesHeld + bytes > maxPendingBytes)
      throw new QueueFullError({ maxPendingBytes, tasks: this.waiting.size, held: this.bytesHeld, bytes });
  }

  /** Queues `task`, which holds `bytes` (after assertRoom). */
  admit(task: LiveTask, bytes: number): void {
    this.waiting.set(task.record.id, { task, bytes });
    this.bytesHeld += bytes;
  }

  /** The next task to start, its slot taken; undefined while every slot is busy or nothing waits. */
  takeNext(): LiveTask | undefined {
    if (this.slotsTaken >= this.limits.maxRunning) return undefined;
    const next = this.waiting.values().next();
    if (next.done) return undefined;
    this.forget(next.value.task.record.id);
    this.slotsTaken++;
    return next.value.task;
  }

  /** A running task ended: its slot is free. */
  freeSlot(): void {
    this.slotsTaken--;
  }

  /** Takes a pending task out of the queue (cancelled); false when it was not waiting. */
  remove(id: string): boolean {
    return this.forget(id);
  }

  /** Empties the queue (a stop) and returns what waited. */
  drain(): LiveTask[] {
    const tasks = [...this.waiting.values()].map((entry) => entry.task);
    this.waiting.clear();
    this.bytesHeld = 0;
    return tasks;
  }

  get pending(): number {
    return this.waiting.size;
  }

  /** Tasks holding a slot: dispatched to a worker (state running), started or not. */
  get running(): number {
    return this.slotsTaken;
  }

  private forget(id: string): boolean {
    const entry = this.waiting.get(id);
    if (entry === undefined) return false;
    this.waiting.delete(id);
    this.bytesHeld -= entry.bytes;
    return true;
  }
}
