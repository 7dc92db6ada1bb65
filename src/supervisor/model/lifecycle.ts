// A task's lifecycle as one pure function: a record and an event in, the new record and what must
// follow out. The state machine and the todo rules live here and nowhere else; the TaskService
// carries out the effects (one registry write, with its todo, per event).
//
//   pending ──dispatched──▶ running ──started──▶ running ──ended──▶ done | killed | timed_out
//      │                       │                                    (interrupted while stopping)
//      └─cancelled─▶ killed    └─failed─▶ done (error set)     any unfinished ──interrupted──▶ interrupted
//
// Todo rules: a task's todo is shown once it outlives run's wait (`shown`); while shown, every
// change of state is upserted; it is cleared when a finished result is handed to a caller
// (`handed-over`). While the daemon stops, and for a dead daemon's tasks, every end is shown: no
// caller is left to hand it to.
import type { FinalFigures } from '../../process/launched-task.js';
import type { EndedReport, EndReason, ReleasedReport, StreamName } from '../../workers/protocol.js';
import type { ExecCall } from '../../process/launched-task.js';
import { addDenial } from './exec-denials.js';
import { type TaskRecord } from './task.js';
import { isFinished, type TaskState } from '../../shared/task-states.js';

export type LifecycleEvent =
  /** A slot is free and the task goes to a worker. */
  | { type: 'dispatched' }
  | { type: 'started'; pid: number; pgid: number; namespacePid: number | null; startedAt: number }
  | { type: 'truncated'; stream: StreamName; reason: string }
  | EndedReport
  /** The worker let go of the task: nothing of it is left (its final figures, and what it wrote to each stream). */
  | ReleasedReport
  /** Killed while pending: it never starts. */
  | { type: 'cancelled'; endedAt: number }
  /** It could not be run (no terminal could be opened, or its worker failed). */
  | { type: 'failed'; error: string; endedAt: number }
  /** The daemon stopped (or died) before the task finished. */
  | { type: 'interrupted'; error: string; endedAt: number }
  /** run's wait is over and the task still runs: its todo appears. */
  | { type: 'shown' }
  /** A caller is handed the task's finished result: its todo goes. */
  | { type: 'handed-over' }
  /** A caller that was to be handed the task's result hung up first: its todo appears, or stays. */
  | { type: 'unanswered' }
  /** The command policy refused an exec of the task. */
  | { type: 'exec-denied'; rule: number | null; exec: ExecCall; reason: string; at: number }
  /** An exec of the task began to wait for a person's answer (`open`), or no longer waits: its todo shows it. */
  | { type: 'asking'; open: boolean };

export interface LifecycleContext {
  /** The daemon is stopping: every end is interrupted, and shown. */
  stopping: boolean;
}

export interface LifecycleEffects {
  /** Write the record to the registry. */
  persist: boolean;
  /** The todo the write carries, in the same transaction. */
  todo: 'upsert' | 'clear' | null;
  /** The task reached a finished state with this event. */
  finished: boolean;
  /** It held a running slot and gave it back. */
  freedSlot: boolean;
  /** Its worker let go of it (or never will have it): it can leave memory once finished. */
  released: boolean;
}

export interface Transition {
  record: TaskRecord;
  effects: LifecycleEffects;
}

/** Why a task that was running when the daemon stopped (or died) ended: the same words on every path. */
export const STOPPED_WHILE_RUNNING = 'the daemon stopped while the task was running';

const END_STATE: Record<EndReason, TaskState> = { exit: 'done', killed: 'killed', timed_out: 'timed_out' };
const NOTHING: LifecycleEffects = { persist: false, todo: null, finished: false, freedSlot: false, released: false };

/** The next record of `record` after `event`, and what the service must do about it. */
export function advance(record: TaskRecord, event: LifecycleEvent, context: LifecycleContext): Transition {
  switch (event.type) {
    case 'dispatched':
      return afterDispatched(record);
    case 'started':
      return afterStarted(record, event);
    case 'truncated':
      return afterTruncated(record, event);
    case 'ended':
      return afterEnded(record, event, context);
    case 'released':
      return afterReleased(record, event, context);
    case 'cancelled':
      return afterCancelled(record, event, context);
    case 'failed':
      return afterFailed(record, event, context);
    case 'interrupted':
      return afterInterrupted(record, event);
    case 'shown':
      return afterShown(record, context);
    case 'exec-denied':
      return afterExecDenied(record, event);
    case 'asking':
      return afterAsking(record, event, context);
    case 'handed-over':
      return afterHandedOver(record, context);
    case 'unanswered':
      return afterUnanswered(record, context);
  }
}

/** The lifecycle event whose type is `T`. */
type EventOf<T extends LifecycleEvent['type']> = Extract<LifecycleEvent, { type: T }>;

function afterDispatched(record: TaskRecord): Transition {
  // Kept in memory: the start's own write follows within milliseconds, and a crash before it
  // leaves a pending row, which the next start ends as interrupted like any unstarted task.
  return record.state === 'pending' ? { record: { ...record, state: 'running' }, effects: NOTHING } : unchanged(record);
}

function afterStarted(record: TaskRecord, event: EventOf<'started'>): Transition {
  const { pid, pgid, namespacePid, startedAt } = event;
  const next = { ...record, pid, pgid, namespacePid, startedAt };
  return { record: next, effects: { ...NOTHING, persist: true, todo: upsertIfShown(next) } };
}

function afterTruncated(record: TaskRecord, event: EventOf<'truncated'>): Transition {
  const next = {
    ...record,
    [`${event.stream}Truncated`]: true,
    truncation: { ...record.truncation, [event.stream]: event.reason },
  };
  // Written now, a running task's too (once a stream at most): a crash before its end would lose it.
  return { record: next, effects: { ...NOTHING, persist: true } };
}

function afterEnded(record: TaskRecord, event: EndedReport, context: LifecycleContext): Transition {
  if (isFinished(record.state)) return unchanged(record);
  // An OOM kill leads; what else went wrong (a shim that died with its task) follows it.
  const error = event.oomKilled
    ? [`killed by the kernel: out of memory (limit ${record.limits.memoryLimitMb} MiB)`, event.error]
        .filter((part) => part !== null)
        .join('; ')
    : (event.error ?? (context.stopping ? STOPPED_WHILE_RUNNING : null));
  const state = context.stopping ? 'interrupted' : END_STATE[event.reason];
  const { exitCode, signal, endedAt } = event;
  const ended = finish(record, { state, exitCode, signal, error, endedAt }, context);
  return {
    record: { ...ended.record, oomKilled: event.oomKilled, ...knownFigures(event) },
    effects: ended.effects,
  };
}

function afterReleased(record: TaskRecord, event: ReleasedReport, context: LifecycleContext): Transition {
  // Let go of before its end was reported (never, from a worker that keeps to the protocol): it ends here.
  if (!isFinished(record.state)) {
    const error = 'internal error: the worker let go of the task before reporting its end';
    return afterFailed(record, { type: 'failed', error, endedAt: Date.now() }, context);
  }
  const known = knownFigures(event);
  return {
    record: { ...record, ...known },
    effects: { ...NOTHING, persist: Object.keys(known).length > 0, released: true },
  };
}

function afterFailed(record: TaskRecord, event: EventOf<'failed'>, context: LifecycleContext): Transition {
  if (isFinished(record.state)) return { record, effects: { ...NOTHING, released: true } };
  const end = { state: 'done', exitCode: null, signal: null, error: event.error, endedAt: event.endedAt } as const;
  const ended = finish(record, end, context);
  return { record: ended.record, effects: { ...ended.effects, released: true } };
}

function afterCancelled(record: TaskRecord, event: EventOf<'cancelled'>, context: LifecycleContext): Transition {
  if (record.state !== 'pending') return unchanged(record);
  return finish(
    record,
    { state: 'killed', exitCode: null, signal: null, error: null, endedAt: event.endedAt },
    context,
  );
}

function afterInterrupted(record: TaskRecord, event: EventOf<'interrupted'>): Transition {
  if (isFinished(record.state)) return unchanged(record);
  const { error, endedAt } = event;
  return finish(record, { state: 'interrupted', exitCode: null, signal: null, error, endedAt }, { stopping: true });
}

function afterShown(record: TaskRecord, context: LifecycleContext): Transition {
  if (isFinished(record.state) || context.stopping) return unchanged(record);
  const next = { ...record, todoShown: true };
  return { record: next, effects: { ...NOTHING, persist: true, todo: 'upsert' } };
}

function afterAsking(record: TaskRecord, event: EventOf<'asking'>, context: LifecycleContext): Transition {
  // The harness is told of an exec that waits for a person, whether run's wait is over or not.
  if (event.open) return afterShown(record, context);
  if (isFinished(record.state) || !record.todoShown) return unchanged(record);
  return { record, effects: { ...NOTHING, persist: true, todo: 'upsert' } };
}

function afterExecDenied(record: TaskRecord, event: EventOf<'exec-denied'>): Transition {
  const next = { ...record, denials: addDenial(record.denials, event, event.at) };
  return { record: next, effects: { ...NOTHING, persist: true, todo: upsertIfShown(next) } };
}

function afterHandedOver(record: TaskRecord, context: LifecycleContext): Transition {
  if (!isFinished(record.state) || !record.todoShown || context.stopping) return unchanged(record);
  return { record: { ...record, todoShown: false }, effects: { ...NOTHING, persist: true, todo: 'clear' } };
}

function afterUnanswered(record: TaskRecord, context: LifecycleContext): Transition {
  // Running or ended: no caller was told, so the harness is, as if run's wait were over.
  if (record.todoShown || context.stopping) return unchanged(record);
  return { record: { ...record, todoShown: true }, effects: { ...NOTHING, persist: true, todo: 'upsert' } };
}

type End = Pick<TaskRecord, 'state' | 'exitCode' | 'signal' | 'error' | 'endedAt'>;

function finish(record: TaskRecord, end: End, context: LifecycleContext): Transition {
  const next: TaskRecord = { ...record, ...end, todoShown: record.todoShown || context.stopping };
  return {
    record: next,
    effects: {
      ...NOTHING,
      persist: true,
      todo: upsertIfShown(next),
      finished: true,
      freedSlot: record.state === 'running',
    },
  };
}

/** The figures an event knows (the others stay as the record has them). */
function knownFigures(figures: FinalFigures): Partial<FinalFigures> {
  const { cpuMs, pidsLimitHits, memoryPeakBytes } = figures;
  return Object.fromEntries(
    Object.entries({ cpuMs, pidsLimitHits, memoryPeakBytes }).filter(([, value]) => value !== null),
  );
}

function upsertIfShown(record: TaskRecord): 'upsert' | null {
  return record.todoShown ? 'upsert' : null;
}

function unchanged(record: TaskRecord): Transition {
  return { record, effects: NOTHING };
}
