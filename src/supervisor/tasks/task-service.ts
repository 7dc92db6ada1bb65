// The task orchestrator: admits tasks into the registry, schedules them onto workers, applies each
// report to the registry, and answers the tools' questions about them.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { InputRefusedError, NameBusyError, QueueFullError, UnknownTaskError } from '../errors.js';
import { FINISHED_STATES, type TaskRecord, type TaskState, type TaskStore } from '../registry/task-store.js';
import type { EndReason, KillSignal, ReportMessage } from '../../workers/protocol.js';
import type { DispatchedTask, WorkerPool } from './worker-pool.js';
import type { OutputFiles } from './output-files.js';
import { countLeftovers, killLeftovers } from './leftovers.js';
import { TaskTodos } from './task-todos.js';
import { composeClear } from '../todos/todo-message.js';
import { taskCgroupDir, type Containment } from '../containment.js';
import { countCgroupProcesses, NO_RESOURCES, readTaskResources, type TaskResources } from '../../workers/task-resources.js';
import { removeCgroup } from '../../workers/launch-native.js';
import { taskEnvironment } from './task-environment.js';
import { openTerminal } from './terminals.js';

export interface TaskLimits {
  maxRunning: number;
  maxPending: number;
  defaultTimeoutSeconds: number | null;
  killGraceMs: number;
  maxOutputBytes: number;
}

export interface RunRequest {
  command: string;
  name: string | null;
  timeoutSeconds: number | null;
  cwd: string;
  env: Record<string, string>;
  stdin: string | null;
  /** Run on a pseudo-terminal of this size; null: on pipes. */
  terminal: { cols: number; rows: number } | null;
  /** Keep stdin open for input. */
  interactive: boolean;
}

export interface InputOutcome {
  record: TaskRecord;
  /** Bytes of the text the task had not taken when the answer came (it is not reading). */
  pendingBytes: number;
  stdinOpen: boolean;
}

type InputAnswer = { pendingBytes: number; error: string | null };

export interface KillOutcome {
  record: TaskRecord;
  /** The signal sent, or null when nothing was left to signal. */
  signal: KillSignal | null;
  /** Processes of a finished task that were still alive and are now being ended. */
  leftovers: number;
}

interface LiveTask {
  record: TaskRecord;
  /** What run asked for, until the task is dispatched (then dropped: its stdin text may be large). */
  request: RunRequest | null;
  worker: DispatchedTask | null;
  /** Resolves when the task reaches a finished state. */
  ended: Promise<void>;
  markEnded: () => void;
  /** Resolves when its worker lets go of it: nothing of the task is left (with the native spawner). */
  released: Promise<void>;
  markReleased: () => void;
  /** Interactive, and no input has closed stdin yet. */
  stdinOpen: boolean;
  /** Inputs sent to the worker and not yet answered, by request id. */
  inputs: Map<number, (answer: InputAnswer) => void>;
}

/** How long input waits for the worker's answer (which comes after at most a second). */
const INPUT_ANSWER_MS = 10_000;

const END_STATE: Record<EndReason, TaskState> = { exit: 'done', killed: 'killed', timed_out: 'timed_out' };

export class TaskService {
  private readonly live = new Map<string, LiveTask>();
  /** Pending tasks in arrival order (a Map keeps insertion order and deletes in O(1)). */
  private readonly pending = new Map<string, LiveTask>();
  private running = 0;
  private inputRequests = 0;
  /** Set once the daemon is stopping: every task that ends from then on ends as interrupted. */
  private stopping = false;
  private readonly endListeners: Array<(record: TaskRecord) => void> = [];
  private readonly replaceListeners: Array<() => void> = [];
  private readonly todos: TaskTodos;

  constructor(
    private readonly store: TaskStore,
    private readonly pool: WorkerPool,
    private readonly files: OutputFiles,
    private readonly limits: TaskLimits,
    private readonly containment: Containment,
    private readonly baseEnv: Record<string, string>,
    private readonly log: Logger,
  ) {
    this.todos = new TaskTodos(store, this);
  }

  /** Called with each task's record when it reaches a finished state. */
  onTaskEnded(listener: (record: TaskRecord) => void): void {
    this.endListeners.push(listener);
  }

  /** Called when a run reuses the name of a finished task, whose record it replaces. */
  onTaskReplaced(listener: () => void): void {
    this.replaceListeners.push(listener);
  }

  /** Admits a task: pending at once, running as soon as a slot is free. */
  run(request: RunRequest): TaskRecord {
    if (this.pending.size >= this.limits.maxPending && this.running >= this.limits.maxRunning) {
      throw new QueueFullError(this.limits.maxPending);
    }
    const id = request.name ?? this.store.generateId();
    const timeoutSeconds = request.timeoutSeconds ?? this.limits.defaultTimeoutSeconds;
    const record: TaskRecord = {
      id,
      name: request.name,
      command: request.command,
      cwd: request.cwd,
      pty: request.terminal !== null,
      interactive: request.interactive,
      state: 'pending',
      runKey: randomUUID(),
      timeoutMs: timeoutSeconds === null ? null : Math.round(timeoutSeconds * 1000),
      exitCode: null,
      signal: null,
      error: null,
      createdAt: Date.now(),
      startedAt: null,
      endedAt: null,
      pid: null,
      pgid: null,
      stdoutTruncated: false,
      stderrTruncated: false,
      cpuMs: null,
      todoShown: false,
    };
    const admitted = this.store.insert(record, composeClear(id));
    if ('busyState' in admitted) throw new NameBusyError(id, admitted.busyState);
    if (admitted.replaced) {
      this.files.remove(id);
      for (const listener of this.replaceListeners) listener();
    }
    let markEnded = () => {};
    let markReleased = () => {};
    const ended = new Promise<void>((resolve) => (markEnded = resolve));
    const released = new Promise<void>((resolve) => (markReleased = resolve));
    const task: LiveTask = { record, request, worker: null, ended, markEnded, released, markReleased, stdinOpen: request.interactive, inputs: new Map() };
    this.live.set(id, task);
    this.pending.set(id, task);
    this.startPending();
    return record;
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
      const timer = new AbortController();
      await Promise.race([task.ended, sleep(seconds * 1000, undefined, { signal: timer.signal }).catch(() => {})]);
      timer.abort();
    }
    return this.get(id);
  }

  /**
   * Run's wait is over. A finished task goes back inline and makes no todo; one still going gets its
   * todo now. Synchronous, so a task ends either before this (inline) or after (its end is upserted).
   */
  settleRun(id: string): TaskRecord {
    const task = this.live.get(id);
    if (!task || FINISHED_STATES.includes(task.record.state)) return this.handOver(id);
    if (!this.stopping) task.record = this.todos.show(task.record);
    return task.record;
  }

  /** The task's record for a caller; a finished one is being handed over, so its todo is cleared. */
  handOver(id: string): TaskRecord {
    const record = this.get(id);
    if (this.stopping) return record;
    const cleared = this.todos.clear(record);
    const task = this.live.get(id);
    if (task && cleared !== record) task.record = cleared;
    return cleared;
  }

  /** Processes of a finished task still alive after its leader exited. */
  countLeftovers(record: TaskRecord): number {
    if (this.containment.spawner === 'node') return countLeftovers(record, 'group');
    // A released task's shim has exited, and it exits only once its whole subtree is gone.
    if (!this.held(record)) return 0;
    const cgroupDir = taskCgroupDir(this.containment, record.runKey);
    if (cgroupDir !== null) return countCgroupProcesses(cgroupDir) ?? 0;
    return countLeftovers(record, 'anywhere');
  }

  /** Whether this run of the task is still held by a worker (not yet released). */
  private held(record: TaskRecord): boolean {
    return this.live.get(record.id)?.record.runKey === record.runKey;
  }

  /** CPU, memory and process figures of a task, where its cgroup gives them. */
  resourcesOf(record: TaskRecord): TaskResources {
    const cgroupDir = taskCgroupDir(this.containment, record.runKey);
    if (cgroupDir === null) return NO_RESOURCES;
    if (this.held(record)) return readTaskResources(cgroupDir);
    return { ...NO_RESOURCES, cpuMs: record.cpuMs, processes: 0 };
  }

  /** Ends a task: cancels it if pending, signals all of it if running, ends what a finished one left. */
  kill(id: string, signal: KillSignal): KillOutcome {
    const task = this.live.get(id);
    if (task?.record.state === 'pending') {
      this.pending.delete(id);
      this.finish(task, { state: 'killed', exitCode: null, signal: null, error: null, endedAt: Date.now() });
      return { record: task.record, signal: null, leftovers: 0 };
    }
    if (task?.worker && task.record.state === 'running') {
      task.worker.send({ type: 'kill', signal });
      return { record: task.record, signal, leftovers: 0 };
    }
    const record = this.get(id);
    const leftovers = this.countLeftovers(record);
    if (leftovers > 0) {
      // Finished but not released: the worker still holds the task and ends what it left.
      if (task?.worker) task.worker.send({ type: 'kill', signal });
      else killLeftovers(record, signal, this.limits.killGraceMs);
    }
    return { record, signal: leftovers > 0 ? signal : null, leftovers };
  }

  /** Writes to an interactive task's stdin (then closes it with `eof`); answers once the task took it, or after a second. */
  async input(id: string, text: string, eof: boolean): Promise<InputOutcome> {
    const task = this.live.get(id);
    const record = task?.record ?? this.get(id);
    if (!record.interactive) throw new InputRefusedError(record, 'it was not started with interactive: true, so its stdin is /dev/null or was closed after its stdin text; run it again with interactive: true');
    if (record.state === 'pending') throw new InputRefusedError(record, 'it is still pending (waiting for a free slot); input is taken once it runs');
    if (!task?.worker || record.state !== 'running') throw new InputRefusedError(record, `it has ended (${record.state}), so its stdin is closed`);
    if (!task.stdinOpen) throw new InputRefusedError(record, 'its stdin was closed by an earlier input with eof: true');
    if (eof) task.stdinOpen = false;
    const requestId = ++this.inputRequests;
    const answer = new Promise<InputAnswer>((resolve) => task.inputs.set(requestId, resolve));
    task.worker.send({ type: 'input', requestId, text, eof });
    // The worker answers within about a second; a call must never hang on one that cannot.
    const timer = setTimeout(() => task.inputs.get(requestId)?.({ pendingBytes: 0, error: 'its worker did not answer in time; call status to see the task' }), INPUT_ANSWER_MS);
    const { pendingBytes, error } = await answer;
    clearTimeout(timer);
    task.inputs.delete(requestId);
    if (error !== null) throw new InputRefusedError(task.record, error);
    return { record: task.record, pendingBytes, stdinOpen: task.stdinOpen };
  }

  /** Whether input can write to the task now. */
  stdinOpen(record: TaskRecord): boolean {
    const task = this.live.get(record.id);
    return task !== undefined && task.record.runKey === record.runKey && task.record.state === 'running' && task.stdinOpen;
  }

  list(state: TaskState | null, limit: number): TaskRecord[] {
    return this.store.list(state, limit);
  }

  countByState(): Record<TaskState, number> {
    return this.store.countByState();
  }

  outputPaths(id: string): { stdout: string; stderr: string } {
    return this.files.pathsOf(id);
  }

  private startPending(): void {
    while (this.running < this.limits.maxRunning && this.pending.size > 0) {
      const [id, task] = this.pending.entries().next().value as [string, LiveTask];
      this.pending.delete(id);
      this.dispatch(task);
    }
  }

  private dispatch(task: LiveTask): void {
    const { record } = task;
    const request = task.request!;
    task.request = null;
    const paths = this.files.pathsOf(record.id);
    let terminal: { masterFd: number; path: string } | null = null;
    try {
      if (request.terminal !== null) terminal = openTerminal(request.terminal.cols, request.terminal.rows);
    } catch (error) {
      this.finish(task, { state: 'done', exitCode: null, signal: null, error: `spawn failed: no terminal could be opened: ${(error as Error).message}`, endedAt: Date.now() });
      return;
    }
    this.running++;
    task.record = { ...record, state: 'running' };
    this.store.markRunning(record.id);
    task.worker = this.pool.dispatch(
      {
        taskId: record.id,
        runKey: record.runKey,
        command: record.command,
        cwd: record.cwd,
        env: taskEnvironment(this.baseEnv, { id: record.id, runKey: record.runKey, env: request.env, pty: record.pty, interactive: record.interactive }),
        stdin: request.stdin,
        interactive: request.interactive,
        terminal,
        stdoutPath: paths.stdout,
        stderrPath: paths.stderr,
        maxOutputBytes: this.limits.maxOutputBytes,
        timeoutMs: record.timeoutMs,
        killGraceMs: this.limits.killGraceMs,
        spawner: this.containment.spawner,
        cgroupDir: taskCgroupDir(this.containment, record.runKey),
      },
      (message) => this.applyReport(task, message),
    );
    void task.worker.outcome.then((outcome) => {
      if (outcome.ok) return;
      this.log.error({ task: record.id, error: outcome.error }, 'task worker failed');
      if (!FINISHED_STATES.includes(task.record.state)) {
        this.finish(task, { state: 'done', exitCode: null, signal: null, error: `internal error: ${outcome.error}`, endedAt: Date.now() });
      }
      this.release(task);
    });
  }

  private applyReport(task: LiveTask, message: ReportMessage): void {
    switch (message.type) {
      case 'input-done':
        task.inputs.get(message.requestId)?.(message); // input() forgets it
        return;
      case 'started':
        task.record = { ...task.record, pid: message.pid, pgid: message.pgid, startedAt: message.startedAt };
        this.store.markStarted(task.record, this.todos.changed(task.record));
        return;
      case 'truncated':
        task.record = { ...task.record, [`${message.stream}Truncated`]: true };
        if (FINISHED_STATES.includes(task.record.state)) this.store.markEnded(task.record);
        return;
      case 'ended':
        this.finish(task, {
          state: this.stopping ? 'interrupted' : END_STATE[message.reason],
          exitCode: message.exitCode,
          signal: message.signal,
          error: message.error,
          endedAt: message.endedAt,
        });
        return;
      case 'released':
        if (message.cpuMs !== null) {
          task.record = { ...task.record, cpuMs: message.cpuMs };
          this.store.markEnded(task.record);
        }
        this.release(task);
        return;
    }
  }

  private finish(task: LiveTask, end: Pick<TaskRecord, 'state' | 'exitCode' | 'signal' | 'error' | 'endedAt'>): void {
    const wasRunning = task.record.state === 'running';
    // At shutdown every task gets its end todo: a run still waiting on it will never answer.
    task.record = { ...task.record, ...end, todoShown: task.record.todoShown || this.stopping };
    task.stdinOpen = false;
    this.store.markEnded(task.record, this.todos.changed(task.record));
    task.markEnded();
    if (!task.worker) this.live.delete(task.record.id);
    if (wasRunning) {
      this.running--;
      this.startPending();
    }
    for (const listener of this.endListeners) listener(task.record);
  }

  private release(task: LiveTask): void {
    for (const answer of task.inputs.values()) answer({ pendingBytes: 0, error: 'the task ended before it took the input' });
    task.inputs.clear();
    task.markReleased();
    if (this.live.get(task.record.id) === task) this.live.delete(task.record.id);
  }

  /**
   * After the workers are gone at shutdown: removes the cgroups of tasks they did not release in
   * time (killing what is left in them), so a stop leaves no task cgroup behind.
   */
  async removeUnreleasedCgroups(): Promise<void> {
    const dirs = [...this.live.values()].map((task) => taskCgroupDir(this.containment, task.record.runKey));
    await Promise.all(dirs.map((dir) => (dir === null ? null : removeCgroup(dir))));
  }

  /** Stops every task for a daemon shutdown: pending ones are dropped, running ones ended. */
  async interruptAll(): Promise<void> {
    this.stopping = true;
    for (const task of this.pending.values()) {
      this.finish(task, { state: 'interrupted', exitCode: null, signal: null, error: 'the daemon stopped before the task started', endedAt: Date.now() });
    }
    this.pending.clear();
    // Running tasks, and finished ones whose leftovers the workers still hold.
    const held = [...this.live.values()].filter((task) => task.worker !== null);
    const running = held.filter((task) => task.record.state === 'running');
    for (const task of held) task.worker!.send({ type: 'kill', signal: 'SIGTERM' });
    // The workers escalate to SIGKILL after the grace period and then remove the tasks' cgroups;
    // the margin covers the reaping.
    await Promise.race([Promise.all(held.map((task) => task.released)), sleep(this.limits.killGraceMs + 2000)]);
    for (const task of running) {
      if (task.record.state !== 'running') continue;
      this.finish(task, { state: 'interrupted', exitCode: null, signal: null, error: 'the daemon stopped while the task was running', endedAt: Date.now() });
    }
  }
}
