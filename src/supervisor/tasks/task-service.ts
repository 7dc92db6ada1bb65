// The task orchestrator: admits tasks, starts them on workers as slots free, feeds every report
// through the lifecycle and carries out its effects (one registry write per event), and answers
// the tools. Control (kill, input) and the stop are in modules of their own.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { NameBusyError, UnknownTaskError } from '../../errors.js';
import { allTaskCgroupDirs, type Containment } from '../../process/containment.js';
import { removeTaskCgroupDirs } from '../../process/task-cgroups.js';
import { openTerminal } from '../../process/terminals.js';
import { advance, type LifecycleEvent } from '../model/lifecycle.js';
import { createTaskRecord, isFinished, type TaskRecord, type TaskState } from '../model/task.js';
import type { OutputFiles } from '../output/output-files.js';
import type { TaskStore } from '../registry/task-store.js';
import { composeClear, composeTodo, todoSnapshotSource } from '../todos/todo-message.js';
import { createLiveTask, type LiveTask, type RunRequest } from './live-task.js';
import type { ShutdownHost } from './shutdown.js';
import { TaskEvents } from './task-events.js';
import { refuseWaitingInputs, TaskControl, type ControlHost } from './task-control.js';
import { TaskProbes } from './task-probes.js';
import { TaskQueue } from './task-queue.js';
import { resolveTaskLimits, type LimitPolicy } from './task-limits.js';
import { resolveSandbox, type SandboxPolicy } from './task-sandbox.js';
import { buildTaskSpec } from './task-spec.js';
import type { PoolReport, WorkerPool } from './worker-pool.js';
import { within } from '../../within.js';

export interface ServiceSettings {
  maxRunning: number;
  maxPending: number;
  defaultTimeoutSeconds: number | null;
  killGraceMs: number;
  maxOutputBytes: number;
  limitPolicy: LimitPolicy;
  sandboxPolicy: SandboxPolicy;
}

export class TaskService implements ControlHost, ShutdownHost {
  readonly live = new Map<string, LiveTask>();
  readonly probes: TaskProbes;
  readonly killGraceMs: number;
  private readonly queue: TaskQueue;
  /** Kill and input. */
  readonly control = new TaskControl(this);
  private readonly todoSource;
  /** Set once the daemon is stopping: every task that ends from then on ends as interrupted. */
  private stopping = false;
  /** Ends, lifecycle steps and replaced records, for whoever listens. */
  readonly events = new TaskEvents();

  constructor(
    private readonly store: TaskStore,
    private readonly pool: WorkerPool,
    readonly files: OutputFiles,
    private readonly limits: ServiceSettings,
    readonly containment: Containment,
    private readonly baseEnv: Record<string, string>,
    private readonly log: Logger,
  ) {
    this.queue = new TaskQueue(limits);
    this.probes = new TaskProbes(this.live, containment, files);
    this.todoSource = todoSnapshotSource(this.probes);
    this.killGraceMs = limits.killGraceMs;
  }

  /** Admits a task: pending at once, running as soon as a slot is free. */
  run(request: RunRequest): TaskRecord {
    const limits = resolveTaskLimits(request.limits, this.limits.limitPolicy, this.containment.controllers);
    const sandbox = resolveSandbox(
      request.sandbox,
      request.cwd,
      { ...this.baseEnv, ...request.env },
      this.limits.sandboxPolicy,
      this.containment.sandbox,
    );
    this.queue.assertRoom(); // a full queue refuses before anything is written, even an id
    const timeoutSeconds = request.timeoutSeconds ?? this.limits.defaultTimeoutSeconds;
    const build = (id: string) =>
      createTaskRecord({
        id,
        name: request.name,
        command: request.command,
        cwd: request.cwd,
        pty: request.terminal !== null,
        terminalSize: request.terminal,
        interactive: request.interactive,
        runKey: randomUUID(),
        timeoutMs: timeoutSeconds === null ? null : Math.round(timeoutSeconds * 1000),
        limits,
        sandbox,
      });
    const admitted = this.store.insert(request.name, build, composeClear);
    if ('busyState' in admitted) throw new NameBusyError(admitted.id, admitted.busyState);
    if (admitted.replaced) {
      this.files.remove(admitted.record.id);
      this.events.emitReplaced();
    }
    const task = createLiveTask(admitted.record, request);
    this.live.set(admitted.record.id, task);
    this.queue.admit(task);
    this.startPending();
    return task.record;
  }

  /** Writes this turn's changes to the registry now: before an answer that shows them goes out. */
  commit(): void {
    this.store.commit();
  }

  /** The task's current record: live from memory, finished from the registry. */
  get(id: string): TaskRecord {
    const record = this.live.get(id)?.record ?? this.store.get(id);
    if (!record) throw new UnknownTaskError(id);
    return record;
  }

  /** Waits up to `seconds` for the task to finish; returns its record either way. */
  async waitForEnd(id: string, seconds: number): Promise<TaskRecord> {
    const task = this.live.get(id);
    if (task && seconds > 0) {
      await within(task.ended.reached, seconds * 1000, undefined);
    }
    return this.get(id);
  }

  /**
   * Run's wait is over: a finished task goes back inline and makes no todo; one still going gets
   * its todo now. Synchronous, so a task ends either before this (inline) or after (its end is upserted).
   */
  settleRun(id: string): TaskRecord {
    const task = this.live.get(id);
    if (!task || isFinished(task.record.state)) return this.handOver(id);
    this.apply(task, { type: 'shown' });
    return task.record;
  }

  /** The task's record for a caller; a finished one is being handed over, so its todo is cleared. */
  handOver(id: string): TaskRecord {
    const task = this.live.get(id);
    if (task) return this.apply(task, { type: 'handed-over' });
    return this.applyStored(this.get(id), { type: 'handed-over' });
  }

  cancel(task: LiveTask): void {
    this.queue.remove(task.record.id);
    this.apply(task, { type: 'cancelled', endedAt: Date.now() });
  }

  /** The newest tasks, as the registry has them but with live ones as they are now. */
  list(state: TaskState | null, limit: number): TaskRecord[] {
    // Every pending and running task is live (a dispatched one's row still says pending): memory knows them.
    if (state === 'pending' || state === 'running') {
      return [...this.live.values()]
        .reverse()
        .map((task) => task.record)
        .filter((record) => record.state === state)
        .slice(0, limit);
    }
    const rows = this.store.list(state, limit).map((record) => this.live.get(record.id)?.record ?? record);
    return state === null ? rows : rows.filter((record) => record.state === state);
  }

  countByState(): Record<TaskState, number> {
    // Pending and running tasks are all this daemon's, and the queue knows them as they are now.
    return { ...this.store.countByState(), pending: this.queue.pending, running: this.queue.running };
  }

  beginStop(): LiveTask[] {
    this.stopping = true;
    return this.queue.drain();
  }

  private startPending(): void {
    for (let task = this.queue.takeNext(); task !== undefined; task = this.queue.takeNext()) this.dispatch(task);
  }

  private dispatch(task: LiveTask): void {
    const request = task.request!;
    task.request = null;
    this.apply(task, { type: 'dispatched' });
    let terminal = null;
    try {
      if (request.terminal !== null) terminal = openTerminal(request.terminal.cols, request.terminal.rows);
    } catch (error) {
      this.apply(task, {
        type: 'failed',
        error: `spawn failed: no terminal could be opened: ${(error as Error).message}`,
        endedAt: Date.now(),
      });
      return;
    }
    const spec = buildTaskSpec(task.record, request, terminal, {
      limits: this.limits,
      containment: this.containment,
      files: this.files,
      baseEnv: this.baseEnv,
    });
    task.worker = this.pool.dispatch(spec, (report) => this.onReport(task, report));
  }

  private onReport(task: LiveTask, report: PoolReport): void {
    if (report.type === 'input-done') return void task.inputs.get(report.requestId)?.(report); // input() forgets it
    if (report.type === 'started') task.shimPid = report.shimPid;
    if (report.type === 'worker-failed') {
      this.log.error({ task: task.record.id, error: report.error }, 'task worker failed');
      // Nobody else will: the worker that held its cgroups is gone.
      void removeTaskCgroupDirs(allTaskCgroupDirs(this.containment, task.record.runKey));
      return void this.apply(task, { type: 'failed', error: `internal error: ${report.error}`, endedAt: Date.now() });
    }
    this.apply(task, report);
  }

  /** Advances a live task and carries out the effects; returns its new record. */
  apply(task: LiveTask, event: LifecycleEvent): TaskRecord {
    const { record, effects } = advance(task.record, event, { stopping: this.stopping });
    task.record = record;
    if (effects.persist)
      this.store.save(record, effects.todo === null ? null : composeTodo(record, effects.todo, this.todoSource));
    if (effects.finished) {
      task.stdinOpen = false;
      task.ended.reach();
    }
    if (effects.released) {
      refuseWaitingInputs(task);
      task.released.reach();
    }
    if ((effects.released || (effects.finished && task.worker === null)) && this.live.get(record.id) === task)
      this.live.delete(record.id);
    if (effects.freedSlot) {
      this.queue.freeSlot();
      this.startPending();
    }
    this.events.emitTransition(task, event, effects);
    return record;
  }

  /** Advances a task that only the registry holds (finished, its worker gone). */
  private applyStored(stored: TaskRecord, event: LifecycleEvent): TaskRecord {
    const { record, effects } = advance(stored, event, { stopping: this.stopping });
    if (effects.persist)
      this.store.save(record, effects.todo === null ? null : composeTodo(record, effects.todo, this.todoSource));
    return record;
  }
}
