// The task orchestrator: admits tasks, starts them on workers as slots free, feeds every report
// through the lifecycle and carries out its effects (one registry write per event), kills, writes
// input and stops; and answers what a task is now (its record, snapshot, output files, processes,
// ports, the moment it starts or ends). Its state (the live tasks, the registry, the queue) is its
// own: kill and input's work is in task-control.ts, the stop's waits in shutdown.ts, what the OS
// knows of a task in task-probes.ts.
import type { Logger } from 'pino';
import { NameBusyError, NameNotOwnError, UnknownTaskError } from '../../errors.js';
import { allTaskCgroupDirs, type HostSetup } from '../../process/containment.js';
import type { ListeningPort } from '../../shared/task-snapshot.js';
import type { TaskResources } from '../../process/resources.js';
import type { FoundPorts } from '../../process/ports.js';
import type { KillSignal } from '../../shared/signals.js';
import { removeTaskCgroupDirs } from '../../process/task-cgroups.js';
import { openTerminal } from '../../process/terminals.js';
import { advance, STOPPED_WHILE_RUNNING, type LifecycleEvent } from '../model/lifecycle.js';
import { snapshotTask } from '../model/task-snapshot.js';
import type { TaskRecord } from '../model/task.js';
import { isFinished, type TaskState } from '../../shared/task-states.js';
import type { TaskSnapshot } from '../../shared/task-snapshot.js';
import type { ApprovalBoard } from '../policy/approvals.js';
import type { OutputFiles } from '../output/output-files.js';
import type { TaskStore } from '../registry/task-store.js';
import { composeClear, composeTodo, todoSnapshotSource } from '../todos/todo-message.js';
import { createLiveTask, recordOfRun, type LiveTask, type RunRequest } from './live-task.js';
import { endDispatched, removeCgroupsOf } from './shutdown.js';
import { TaskEvents } from './task-events.js';
import { asKillsEnd, refuseWaitingInputs, TaskControl, type InputOutcome, type KillOutcome } from './task-control.js';
import { pendingBytesOf, TaskQueue } from './task-queue.js';
import { TaskProbes } from './task-probes.js';
import { resolveTaskLimits } from './task-limits.js';
import { resolveSandbox } from './task-sandbox.js';
import { buildTaskSpec } from './task-spec.js';
import { TaskExecs } from './task-execs.js';
import type { ServiceSettings } from './service-settings.js';
import type { PoolReport, WorkerPool } from './worker-pool.js';
import { withTimeout } from '../../with-timeout.js';

/** The least a run's answer waits for its task's start (its pid) when it waited less for the task. */
const START_WAIT_MS = 1000;

export class TaskService {
  /** Every task from run until its worker lets go of it (pending, running, finished with processes still lingering). */
  private readonly live = new Map<string, LiveTask>();
  /**
   * The task whose call made each task's run, by task id, while this daemon runs: a run from a task
   * replaces only a finished task that task made (see assertMayReplace).
   */
  private readonly madeBy = new Map<string, string>();
  /** What only the moment knows of a task (its processes, figures, ports), read from the OS. */
  private readonly probes: TaskProbes;
  private readonly queue: TaskQueue;
  /** The execs that wait for a person; null where the daemon has no command policy. */
  readonly approvals: ApprovalBoard | null;
  private readonly control: TaskControl;
  private readonly execs: TaskExecs;
  private readonly todoSource;
  /** Set once the daemon is stopping: every task that ends from then on ends as interrupted. */
  private stopping = false;
  /** A start of pending tasks is queued for the end of this turn (a slot was freed by a report). */
  private startQueued = false;
  /** Ends, lifecycle steps and replaced records, for whoever listens. */
  readonly events = new TaskEvents();

  constructor(
    private readonly store: TaskStore,
    private readonly pool: WorkerPool,
    private readonly files: OutputFiles,
    private readonly settings: ServiceSettings,
    private readonly hostSetup: HostSetup,
    private readonly baseEnv: Record<string, string>,
    private readonly log: Logger,
  ) {
    this.queue = new TaskQueue(settings);
    this.approvals = settings.approvals;
    this.probes = new TaskProbes(this.live, hostSetup, files, settings.approvals);
    this.control = new TaskControl(this.probes, hostSetup, settings.killGraceMs);
    const apply = (task: LiveTask, event: LifecycleEvent) => void this.apply(task, event);
    this.execs = new TaskExecs(settings.policy?.policy ?? null, settings.approvals, apply);
    this.todoSource = todoSnapshotSource(this.probes);
  }

  /** Admits a task: pending at once, running as soon as a slot is free. */
  run(request: RunRequest): TaskRecord {
    const limits = resolveTaskLimits(request.limits, this.settings.limitPolicy, this.hostSetup.controllers);
    const env = { ...this.baseEnv, ...request.env };
    const sandbox = resolveSandbox(request, env, this.settings.sandboxPolicy, this.hostSetup.sandbox);
    const bytes = pendingBytesOf(request);
    this.queue.assertRoom(bytes); // a full queue refuses before anything is written, even an id
    this.files.assertRoom(); // so does a disk out of inodes, on which the task's files cannot be made
    const timeoutSeconds = request.timeoutSeconds ?? this.settings.defaultTimeoutSeconds;
    const build = (id: string) => recordOfRun(id, request, { limits, sandbox, timeoutSeconds });
    this.assertMayReplace(request);
    const admitted = this.store.insert(request.name, build, composeClear);
    if ('busyState' in admitted) throw new NameBusyError(admitted.id, admitted.busyState);
    // Named runs only: a generated id is never a name a run gives.
    if (request.caller !== null && request.name !== null) this.madeBy.set(admitted.record.id, request.caller.taskId);
    else this.madeBy.delete(admitted.record.id);
    if (admitted.replaced) {
      this.files.remove(admitted.record.id);
      this.events.emitReplaced();
    }
    const task = createLiveTask(admitted.record, request);
    this.live.set(admitted.record.id, task);
    this.queue.admit(task, bytes);
    this.startPending();
    return task.record;
  }

  /**
   * Runs a task, waits for it as `wait` says (its end, a line, a port) and, once dispatched, for its
   * start, until `waitSeconds` (at least START_WAIT_MS) from now: a start that does not come (a
   * stopped spawner or shim) costs the answer its pid, not its time. Then a finished task goes back
   * whole and makes no todo, one still going (with its pid, if known) gets its todo. The hand-over
   * is synchronous: a task ends before it (inline) or after (upserted). A caller that hung up
   * (`callerLeft`) is handed nothing: the task gets its todo, finished or not.
   */
  async runAndWait<T>(
    request: RunRequest,
    wait: (id: string) => Promise<T>,
    waitSeconds: number,
    callerLeft: () => boolean,
  ): Promise<{ record: TaskRecord; waited: T }> {
    const deadline = Date.now() + Math.max(waitSeconds * 1000, START_WAIT_MS);
    const { id } = this.run(request);
    const waited = await wait(id);
    if (this.live.get(id)?.record.state === 'running')
      await withTimeout(this.whenStarted(id), Math.max(deadline - Date.now(), 0), undefined);
    const task = this.live.get(id);
    const record = callerLeft()
      ? this.unanswered(id)
      : !task || isFinished(task.record.state)
        ? this.handOver(id)
        : this.apply(task, { type: 'shown' });
    return { record, waited };
  }

  /**
   * A run from a task may reuse the name of a finished task only if that task's own run came from
   * the same task: else a task could start a sibling (outside its kill) that reruns the killed
   * task's name with `echo passed`, and the agent's next status would show it done, exit 0.
   */
  private assertMayReplace({ name, caller }: RunRequest): void {
    if (name === null || caller === null || this.madeBy.get(name) === caller.taskId) return;
    const existing = this.find(name);
    if (existing !== null && isFinished(existing.state)) throw new NameNotOwnError(name, caller.taskId);
  }

  /** Writes this turn's changes to the registry now: before an answer that shows them goes out. */
  commit(): void {
    this.store.commit();
  }

  /**
   * Waits up to `seconds` for the task to finish, through any approval its execs wait for; with
   * `askable` (the caller's client can be handed a form) also until an exec of it waits for a
   * person its client was not asked about yet. Returns its record either way.
   */
  async waitForEnd(id: string, seconds: number, askable = false): Promise<TaskRecord> {
    const until = askable ? this.whenEndedOrAsked(id) : this.whenEnded(id);
    if (seconds > 0) await withTimeout(until, seconds * 1000, undefined);
    return this.get(id);
  }

  /** The task's record for a caller; a finished one is being handed over, so its todo is cleared. */
  handOver(id: string): TaskRecord {
    return this.applyById(id, { type: 'handed-over' });
  }

  /** The task's record for a caller that hung up before it was answered: its todo appears, or stays. */
  unanswered(id: string): TaskRecord {
    return this.applyById(id, { type: 'unanswered' });
  }

  /** Applies `event` to task `id`, live or only in the registry. */
  private applyById(id: string, event: LifecycleEvent): TaskRecord {
    const task = this.live.get(id);
    if (task) return this.apply(task, event);
    return this.applyStored(this.get(id), event);
  }

  /**
   * Ends a task: cancels it if pending, signals all of it if running (both before this returns its
   * promise), ends what a finished one left once its processes are read (readNow).
   */
  async kill(id: string, signal: KillSignal): Promise<KillOutcome> {
    const task = this.live.get(id);
    if (task?.record.state === 'pending') {
      this.queue.remove(id);
      this.apply(task, { type: 'cancelled', endedAt: Date.now() });
      return { record: task.record, signal: null, lingering: 0 };
    }
    if (task !== undefined && isFinished(task.record.state)) await this.probes.readNow(task.record);
    const now = this.live.get(id);
    return this.control.kill(now, now?.record ?? this.get(id), signal);
  }

  /** Writes to an interactive task's stdin (then closes it with `eof`); answers once the task took it, or after a second. */
  input(id: string, text: string, eof: boolean): Promise<InputOutcome> {
    const task = this.live.get(id);
    return this.control.input(task, task?.record ?? this.get(id), text, eof);
  }

  /** The daemon stops: pending tasks are dropped, running ones ended by their workers within the grace period; all end as interrupted. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const task of this.queue.drain())
      this.apply(task, {
        type: 'interrupted',
        error: 'the daemon stopped before the task started',
        endedAt: Date.now(),
      });
    // Running tasks, and finished ones whose lingering processes the workers still hold.
    const dispatched = [...this.live.values()].filter((task) => task.worker !== null);
    await endDispatched(dispatched, this.settings.killGraceMs);
    for (const task of dispatched)
      if (task.record.state === 'running')
        this.apply(task, { type: 'interrupted', error: STOPPED_WHILE_RUNNING, endedAt: Date.now() });
  }

  /** After the workers are gone: removes the cgroups of tasks they did not release in time, so a stop leaves none. */
  removeUnreleasedCgroups(): Promise<void> {
    return removeCgroupsOf(this.live.values(), this.hostSetup);
  }

  /** The task's current record: live from memory, finished from the registry. */
  get(id: string): TaskRecord {
    const record = this.find(id);
    if (!record) throw new UnknownTaskError(id);
    return record;
  }

  /** The task's current record, or null for a task that is not (or no longer) known. */
  find(id: string): TaskRecord | null {
    return this.live.get(id)?.record ?? this.store.get(id) ?? null;
  }

  /** What status shows of `record`: its figures read now, the last `tailBytes` of its output, its ports as last looked for. */
  snapshot(record: TaskRecord, tailBytes: number): TaskSnapshot {
    return snapshotTask(record, tailBytes, this.probes);
  }

  /** The snapshot with its processes read and its ports looked for now. */
  async snapshotNow(record: TaskRecord, tailBytes: number): Promise<TaskSnapshot> {
    await this.findPorts(record);
    return this.snapshot(record, tailBytes);
  }

  /** Resolves once task `id` has started (its pid known) or finished, or at once for one that is not live. */
  whenStarted(id: string): Promise<void> {
    return this.live.get(id)?.started.reached ?? Promise.resolve();
  }

  /** Resolves once task `id` has finished (at once for one that has, or that is not live). */
  whenEnded(id: string): Promise<void> {
    return this.live.get(id)?.ended.reached ?? Promise.resolve();
  }

  /** Resolves once task `id` has finished, or an exec of it waits for a person its client may be asked about. */
  whenEndedOrAsked(id: string): Promise<void> {
    const ended = this.whenEnded(id);
    if (this.approvals === null || !this.live.has(id)) return ended;
    return Promise.race([ended, this.approvals.whenAsked(id)]);
  }

  /** Whether this run of the task is live: its worker has not let go of it (its output may still grow). */
  isLive(record: TaskRecord): boolean {
    return this.probes.isLive(record);
  }

  outputPaths(id: string): { stdout: string; stderr: string } {
    return this.probes.outputPaths(id);
  }

  /** Its figures: as last read (readNow) for a task without a cgroup. */
  resourcesOf(record: TaskRecord): TaskResources {
    return this.probes.resourcesOf(record);
  }

  /** Reads the processes of a live task without a cgroup now, for its figures (a slice at a time). */
  readNow(record: TaskRecord): Promise<void> {
    return this.probes.readNow(record);
  }

  /** The ports the task listens on now (the first MAX_PORTS_LISTED, and a count of the rest); with `tcpPort`, only that one. Reads its processes now too. */
  findPorts(record: TaskRecord, tcpPort?: number): Promise<FoundPorts> {
    return this.probes.findPorts(record, tcpPort);
  }

  /** The task whose processes listen on TCP `port`, with that listener; null when none does. */
  async listenerOn(port: number): Promise<{ id: string; listener: ListeningPort } | null> {
    for (const task of [...this.live.values()]) {
      const [listener] = (await this.probes.findPorts(task.record, port)).listed;
      if (listener) return { id: task.record.id, listener };
    }
    return null;
  }

  /** The live task whose run key (its cgroup's name) is `runKey`, or null. */
  recordOfRun(runKey: string): TaskRecord | null {
    for (const task of this.live.values()) if (task.record.runKey === runKey) return task.record;
    return null;
  }

  /**
   * The live task whose process tree is rooted at host pid `pid`, or null: its shim, which every
   * process of it descends from; under Node's spawn, which has none, its leader while it runs.
   */
  recordRootedAt(pid: number): TaskRecord | null {
    for (const task of this.live.values()) {
      const root = task.shimPid ?? (task.record.state === 'running' ? task.record.pid : null);
      if (root === pid) return task.record;
    }
    return null;
  }

  /** The newest tasks, as the registry has them (a command cut to its first `commandChars` characters) but with live ones as they are now. */
  list(state: TaskState | null, limit: number, commandChars: number): TaskRecord[] {
    // Every pending and running task is live (a dispatched one's row still says pending): memory knows them.
    if (state === 'pending' || state === 'running') {
      return [...this.live.values()]
        .reverse()
        .map((task) => task.record)
        .filter((record) => record.state === state)
        .slice(0, limit);
    }
    const rows = this.store
      .list(state, limit, commandChars)
      .map((record) => this.live.get(record.id)?.record ?? record);
    return state === null ? rows : rows.filter((record) => record.state === state);
  }

  /** How long the oldest running task has run, and the oldest pending one has waited, in ms (0: none). */
  oldestAgesMs(now = Date.now()): { running: number; pending: number } {
    const ages = { running: 0, pending: 0 };
    for (const { record } of this.live.values()) {
      if (record.state === 'running' && record.startedAt !== null)
        ages.running = Math.max(ages.running, now - record.startedAt);
      else if (record.state === 'pending') ages.pending = Math.max(ages.pending, now - record.createdAt);
    }
    return ages;
  }

  countByState(): Record<TaskState, number> {
    // Pending and running tasks are all this daemon's, and the queue knows them as they are now.
    return { ...this.store.countByState(), pending: this.queue.pending, running: this.queue.running };
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
      const size = request.terminal;
      // A devpts instance of its own needs the sandbox's mount namespace.
      const ownDevpts = task.record.sandbox !== null && this.hostSetup.sandbox.withoutNamespaces === null;
      if (size !== null) terminal = openTerminal(size.cols, size.rows, ownDevpts);
    } catch (error) {
      const reason = `spawn failed: no terminal could be opened: ${(error as Error).message}`;
      this.apply(task, { type: 'failed', error: reason, endedAt: Date.now() });
      return;
    }
    const spec = buildTaskSpec(task.record, request, terminal, {
      budget: this.settings,
      policy: this.settings.policy?.compiled ?? null,
      hostSetup: this.hostSetup,
      files: this.files,
      baseEnv: this.baseEnv,
    });
    task.worker = this.pool.dispatch(spec, (report) => this.onReport(task, report));
  }

  private onReport(task: LiveTask, report: PoolReport): void {
    if (report.type === 'input-done') return void task.inputs.get(report.requestId)?.(report); // input() forgets it
    if (report.type === 'exec') return this.execs.onReport(task, report);
    if (report.type === 'started') task.shimPid = report.shimPid;
    if (report.type === 'ended') task.leftAtEnd = report.left;
    if (report.type === 'worker-failed') {
      this.log.error({ task: task.record.id, error: report.error }, 'task worker failed');
      // Nobody else will: the worker that held its cgroups is gone.
      void removeTaskCgroupDirs(allTaskCgroupDirs(this.hostSetup, task.record.runKey));
      return void this.apply(task, { type: 'failed', error: `internal error: ${report.error}`, endedAt: Date.now() });
    }
    this.apply(task, asKillsEnd(task, report));
  }

  /** Advances a live task and carries out the effects; returns its new record. */
  private apply(task: LiveTask, event: LifecycleEvent): TaskRecord {
    const { record, effects } = this.step(task.record, event);
    task.record = record;
    if (event.type === 'started' || effects.finished) task.started.reach();
    if (effects.finished) {
      task.stdinOpen = false;
      task.ports = null; // what it listened on is looked for again, not shown from before its end
      task.ended.reach();
    }
    if (effects.released) {
      refuseWaitingInputs(task);
      this.execs.released(task);
      task.released.reach();
    }
    if ((effects.released || (effects.finished && task.worker === null)) && this.live.get(record.id) === task)
      this.live.delete(record.id);
    if (effects.freedSlot) {
      this.queue.freeSlot();
      this.queueStart();
    }
    this.events.emitTransition(task, event, effects);
    return record;
  }

  /** Advances a task that only the registry holds (finished, its worker gone). */
  private applyStored(stored: TaskRecord, event: LifecycleEvent): TaskRecord {
    return this.step(stored, event).record;
  }

  /** One step of the lifecycle, written to the registry with the todo it causes. */
  private step(from: TaskRecord, event: LifecycleEvent) {
    const step = advance(from, event, { stopping: this.stopping });
    const { persist, todo } = step.effects;
    if (persist) this.store.save(step.record, todo === null ? null : composeTodo(step.record, todo, this.todoSource));
    return step;
  }

  /**
   * Starts pending tasks once the current report has been carried out: a slot freed inside a
   * worker's report does not dispatch from within that report (no re-entry into the pool).
   */
  private queueStart(): void {
    if (this.startQueued) return;
    this.startQueued = true;
    queueMicrotask(() => {
      this.startQueued = false;
      this.startPending();
    });
  }
}
