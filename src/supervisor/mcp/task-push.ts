// What a client that can hear it is told of the tasks it holds, as they change: an exec of the task
// began to wait for a person (`asking`) or no longer waits (`answered`), or the task ended. Fed by
// the task service's lifecycle steps; each listener is called once per event, after the step.
import type { TaskService } from '../tasks/task-service.js';
import type { LifecycleEffects, LifecycleEvent } from '../model/lifecycle.js';
import type { TaskRecord } from '../model/task.js';
import { isFinished } from '../../shared/task-states.js';
import { DEFAULT_TAIL_BYTES } from '../model/task-snapshot.js';
import { channelParams, type ChannelParams, type PushKind } from './channel-message.js';

export type { PushKind };

export interface PushEvent {
  kind: PushKind;
  record: TaskRecord;
}

export type PushListener = (event: PushEvent) => void;

export class TaskPush {
  private readonly watchers = new Map<string, Set<PushListener>>();

  constructor(private readonly tasks: TaskService) {
    tasks.events.onTransition((task, event, effects) => this.stepped(task.record, event, effects));
  }

  /**
   * Calls `listener` on each event of task `id` until it ends (its end included) or the returned
   * function is called. A task already ended, or with an exec already waiting for a person, is
   * told so at once (on the next turn): a hold that comes after the event (a run's answer is sent
   * after its task's exec may have asked) misses nothing.
   */
  watch(id: string, listener: PushListener): () => void {
    const record = this.tasks.get(id);
    if (isFinished(record.state)) {
      setImmediate(() => listener({ kind: 'ended', record }));
      return () => {};
    }
    if ((this.tasks.approvals?.forTask(id).length ?? 0) > 0) setImmediate(() => listener({ kind: 'asking', record }));
    let set = this.watchers.get(id);
    if (set === undefined) this.watchers.set(id, (set = new Set()));
    set.add(listener);
    return () => this.unwatch(id, listener);
  }

  /** The channel event of `event`, with the task as it is now (an ended one as it ended). */
  channelOf(event: PushEvent): ChannelParams {
    const record = event.kind === 'ended' ? event.record : this.tasks.get(event.record.id);
    const snapshot = this.tasks.snapshot(record, DEFAULT_TAIL_BYTES);
    return channelParams(event.kind, snapshot, this.tasks.outputPaths(record.id));
  }

  /** How many tasks are watched (for /healthz and tests). */
  get size(): number {
    return this.watchers.size;
  }

  private unwatch(id: string, listener: PushListener): void {
    const set = this.watchers.get(id);
    set?.delete(listener);
    if (set?.size === 0) this.watchers.delete(id);
  }

  private stepped(record: TaskRecord, event: LifecycleEvent, effects: LifecycleEffects): void {
    const set = this.watchers.get(record.id);
    if (set === undefined) return;
    const kind: PushKind | null = effects.finished
      ? 'ended'
      : event.type === 'asking'
        ? event.open
          ? 'asking'
          : 'answered'
        : null;
    if (kind === null) return;
    const listeners = [...set];
    if (kind === 'ended') this.watchers.delete(record.id);
    // After the step: its record is the service's, and what it wrote is committed.
    setImmediate(() => {
      for (const listener of listeners) listener({ kind, record });
    });
  }
}
