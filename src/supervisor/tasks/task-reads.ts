// What the task service answers without changing anything: a task's record, snapshot, output
// files, processes, ports and the moment it ends. The service (task-service.ts) is this plus its
// commands; both keep the live tasks, the registry and the probes to themselves.
import { UnknownTaskError } from '../../errors.js';
import type { HostSetup } from '../../process/containment.js';
import type { ListeningPort } from '../../shared/task-snapshot.js';
import type { ProcessTableCache, TaskResources } from '../../process/resources.js';
import { snapshotTask } from '../model/task-snapshot.js';
import { type TaskSnapshot } from '../../shared/task-snapshot.js';
import type { TaskRecord } from '../model/task.js';
import type { TaskState } from '../../shared/task-states.js';
import type { OutputFiles } from '../output/output-files.js';
import type { TaskStore } from '../registry/task-store.js';
import type { LiveTask } from './live-task.js';
import { TaskProbes } from './task-probes.js';
import type { TaskQueue } from './task-queue.js';
import type { ApprovalBoard } from '../policy/approvals.js';

export abstract class TaskReads {
  /** Every task from run until its worker lets go of it (pending, running, finished with processes still lingering). */
  protected readonly live = new Map<string, LiveTask>();

  /** What only the moment knows of a task (its processes, figures, ports), read from the OS. */
  protected readonly probes: TaskProbes;

  constructor(
    protected readonly store: TaskStore,
    protected readonly queue: TaskQueue,
    hostSetup: HostSetup,
    files: OutputFiles,
    /** The execs that wait for a person; null where the daemon has no command policy. */
    readonly approvals: ApprovalBoard | null,
  ) {
    this.probes = new TaskProbes(this.live, hostSetup, files, approvals);
  }

  /** The task's current record: live from memory, finished from the registry. */
  get(id: string): TaskRecord {
    const record = this.live.get(id)?.record ?? this.store.get(id);
    if (!record) throw new UnknownTaskError(id);
    return record;
  }

  /** What status shows of `record`: its figures read now, the last `tailBytes` of its output. */
  snapshot(record: TaskRecord, tailBytes: number): TaskSnapshot {
    return snapshotTask(record, tailBytes, this.probes);
  }

  /** Resolves once task `id` has started (its pid known) or finished, or at once for one that is not live. */
  whenStarted(id: string): Promise<void> {
    return this.live.get(id)?.started.reached ?? Promise.resolve();
  }

  /** Resolves once task `id` has finished (at once for one that has, or that is not live). */
  whenEnded(id: string): Promise<void> {
    return this.live.get(id)?.ended.reached ?? Promise.resolve();
  }

  /** Resolves once task `id` has finished, or an exec of it waits for a person (which a waiting caller is to hear of). */
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

  resourcesOf(record: TaskRecord, table?: ProcessTableCache): TaskResources {
    return this.probes.resourcesOf(record, table);
  }

  portsOf(record: TaskRecord, table?: ProcessTableCache): ListeningPort[] {
    return this.probes.portsOf(record, table);
  }

  /** The task whose processes listen on TCP `port`, with that listener; null when none does. */
  listenerOn(port: number): { id: string; listener: ListeningPort } | null {
    for (const task of this.live.values()) {
      const listener = this.probes
        .portsOf(task.record)
        .find((candidate) => candidate.protocol === 'tcp' && candidate.port === port);
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
}
