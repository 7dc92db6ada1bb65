// What only the moment knows of a task, read from the OS: processes still alive after its leader
// exited, its cgroup's figures, and whether its stdin takes input. The snapshot source of the service.
import { taskCgroupDir, type HostSetup } from '../../process/containment.js';
import { findListeningSockets, listPorts, NO_PORTS, type FoundPorts, type HeldSocket } from '../../process/ports.js';
import {
  countCgroupProcesses,
  listCgroupPids,
  NO_RESOURCES,
  readCgroupResources,
  readTaskProcesses,
  type TaskResources,
  type TaskWhereabouts,
} from '../../process/resources.js';
import { runMarker } from '../../process/process-table.js';
import { planTaskCgroups } from '../../process/limits.js';
import { readLimitFigures } from '../../process/task-cgroups.js';
import { DEFAULT_TAIL_BYTES, readOutputTails, type OutputTails, type SnapshotSource } from '../model/task-snapshot.js';
import { type TaskRecord } from '../model/task.js';
import { isFinished } from '../../shared/task-states.js';
import { BoundedCache } from '../bounded-cache.js';
import type { OutputFiles } from '../output/output-files.js';
import type { LiveTask } from './live-task.js';
import { policyView } from '../model/exec-denials.js';
import { type TaskPolicyView } from '../../shared/task-snapshot.js';
import type { ApprovalBoard } from '../policy/approvals.js';

/** The ports a task's snapshot lists at most, the lowest first; it counts the rest. */
export const MAX_PORTS_LISTED = 100;

/** Finished tasks whose tails (of at most the default size) are kept. */
const FINISHED_TAILS = 256;

export class TaskProbes implements SnapshotSource {
  private readonly finishedTails = new BoundedCache<string, OutputTails>(FINISHED_TAILS);
  /** A task's look for its ports in flight, by run key: whoever asks meanwhile shares it. */
  private readonly scans = new Map<string, Promise<HeldSocket[]>>();
  /** A read of a task's processes in flight (readNow), by run key: whoever asks meanwhile shares it. */
  private readonly reads = new Map<string, Promise<void>>();

  constructor(
    private readonly live: ReadonlyMap<string, LiveTask>,
    private readonly hostSetup: HostSetup,
    private readonly files: OutputFiles,
    /** The execs that wait for a person; null where the daemon has no command policy. */
    private readonly approvals: ApprovalBoard | null,
  ) {}

  /** What the command policy refused in this run, and what of it waits for a person now. */
  policyOf(record: TaskRecord): TaskPolicyView | null {
    if (this.approvals === null) return null;
    const waiting = this.approvals
      .forTask(record.id)
      .filter((approval) => approval.runKey === record.runKey)
      .map((approval) => ({
        id: approval.id,
        command: approval.exec.command,
        program: approval.exec.path,
        rule: approval.rule,
        reason: approval.reason,
        asked_at: new Date(approval.askedAt).toISOString(),
        expires_at: new Date(approval.expiresAt).toISOString(),
      }));
    return policyView(record.denials, waiting);
  }

  outputPaths(id: string): { stdout: string; stderr: string } {
    return this.files.pathsOf(id);
  }

  /** A task's tails: a finished task's files no longer change once its worker let go, so those are kept. */
  outputTails(record: TaskRecord, tailBytes: number): OutputTails {
    const final = isFinished(record.state) && !this.isLive(record) && tailBytes <= DEFAULT_TAIL_BYTES;
    const key = `${record.runKey} ${tailBytes}`;
    const cached = final ? this.finishedTails.get(key) : undefined;
    if (cached) return cached;
    const tails = readOutputTails(this.files.pathsOf(record.id), tailBytes);
    if (final) this.finishedTails.set(key, tails);
    return tails;
  }

  /**
   * Processes of a finished task still alive after its leader exited: none once its worker let go
   * of it (that waits for them all: a shim exits only once its subtree is gone), else those in its
   * cgroup, or as readNow last read them.
   */
  countLingering(record: TaskRecord): number {
    const task = this.liveRun(record);
    if (task === undefined) return 0;
    const cgroupDir = taskCgroupDir(this.hostSetup, record.runKey);
    if (cgroupDir !== null) return countCgroupProcesses(cgroupDir) ?? 0;
    return task.processes?.pids.length ?? 0;
  }

  /** What a task that ended by itself left alive then, as its worker counted it (for its todo). */
  leftAtEnd(record: TaskRecord): number {
    return this.liveRun(record)?.leftAtEnd ?? 0;
  }

  /**
   * Reads now the processes of a live task without a cgroup, for resourcesOf, countLingering and
   * findPorts: a slice at a time, as many reads as the task has processes (a task in a cgroup has
   * its figures read in a few small reads, when asked). Several callers at once share one read.
   */
  async readNow(record: TaskRecord): Promise<void> {
    const task = this.liveRun(record);
    if (task === undefined) return;
    const where = this.whereabouts(task);
    if (where === null || 'cgroupDir' in where) return;
    await shareInFlight(this.reads, record.runKey, async () => {
      task.processes = await readTaskProcesses(where, runMarker(record.runKey));
    });
  }

  /** CPU, memory and process figures of a task: read while its worker holds it (without a cgroup, as readNow last read them), as recorded once it let go. */
  resourcesOf(record: TaskRecord): TaskResources {
    const task = this.liveRun(record);
    if (task === undefined || record.state === 'pending') {
      const { cpuMs, memoryPeakBytes, pidsLimitHits } = record;
      return {
        ...NO_RESOURCES,
        cpuMs,
        memoryPeakBytes,
        pidsLimitHits,
        processes: record.state === 'pending' ? null : 0,
      };
    }
    const cgroupDir = taskCgroupDir(this.hostSetup, record.runKey);
    const where = this.whereabouts(task);
    let resources =
      where === null
        ? NO_RESOURCES
        : 'cgroupDir' in where
          ? readCgroupResources(where.cgroupDir)
          : (task.processes?.resources ?? NO_RESOURCES);
    // Between the removal of its cgroup and its release, what the end's report said stands in.
    if (resources.cpuMs === null) resources = { ...resources, cpuMs: record.cpuMs };
    return Object.values(record.limits).every((limit) => limit === null)
      ? resources
      : this.withLimitFigures(record, resources, cgroupDir);
  }

  /** A limited task's cgroups count its memory (a v1 memory cgroup) and its refused forks. */
  private withLimitFigures(record: TaskRecord, resources: TaskResources, cgroupDir: string | null): TaskResources {
    const figures = readLimitFigures(
      planTaskCgroups(this.hostSetup.controllers, cgroupDir, record.runKey, record.limits),
    );
    return {
      ...resources,
      memoryBytes: figures.memoryBytes ?? resources.memoryBytes,
      memoryPeakBytes: figures.memoryPeakBytes ?? resources.memoryPeakBytes ?? record.memoryPeakBytes,
      pidsLimitHits: figures.pidsLimitHits ?? record.pidsLimitHits,
    };
  }

  /** The ports the task's processes listened on when last looked for (none once its worker let go of it, nor since its end). */
  portsOf(record: TaskRecord): FoundPorts {
    return this.liveRun(record)?.ports ?? NO_PORTS;
  }

  /**
   * Looks for the ports the task's processes listen on now (the first MAX_PORTS_LISTED by port),
   * and keeps them for portsOf; with `tcpPort`, only listeners on that TCP port (not kept).
   */
  async findPorts(record: TaskRecord, tcpPort?: number): Promise<FoundPorts> {
    const task = this.liveRun(record);
    const where = task === undefined ? null : this.whereabouts(task);
    if (where === null) return NO_PORTS;
    const scan = shareInFlight(this.scans, record.runKey, async () =>
      findListeningSockets(await this.taskPids(record, where)),
    );
    const found = listPorts(await scan, MAX_PORTS_LISTED, tcpPort);
    if (tcpPort === undefined && this.live.get(record.id) === task) task!.ports = found;
    return found;
  }

  /** The pids of a live task's processes, read now (not its shim). */
  private async taskPids(record: TaskRecord, where: TaskWhereabouts): Promise<number[]> {
    if ('cgroupDir' in where) return listCgroupPids(where.cgroupDir);
    await this.readNow(record);
    return this.liveRun(record)?.processes?.pids ?? [];
  }

  /** Where a live task's processes are: its cgroup, its shim's subtree, or its process group. */
  private whereabouts(task: LiveTask): TaskWhereabouts | null {
    if (task.record.state === 'pending') return null;
    const cgroupDir = taskCgroupDir(this.hostSetup, task.record.runKey);
    if (cgroupDir !== null) return { cgroupDir };
    if (task.shimPid !== null) return { shimPid: task.shimPid };
    return task.record.pgid === null ? null : { pgid: task.record.pgid };
  }

  /** Whether input can write to the task now. */
  stdinOpen(record: TaskRecord): boolean {
    const task = this.liveRun(record);
    return task !== undefined && task.record.state === 'running' && task.stdinOpen;
  }

  /** Whether this run of the task is live: in memory, not yet let go of by its worker (live-task.ts). */
  isLive(record: TaskRecord): boolean {
    return this.liveRun(record) !== undefined;
  }

  /** The live side of this run of the task; undefined once its worker let go of it, or for another run of its name. */
  private liveRun(record: TaskRecord): LiveTask | undefined {
    const task = this.live.get(record.id);
    return task?.record.runKey === record.runKey ? task : undefined;
  }
}

/** The work in flight in `flights` for `key`, else `start()`'s, kept there until it settles: whoever asks meanwhile shares it. */
function shareInFlight<T>(flights: Map<string, Promise<T>>, key: string, start: () => Promise<T>): Promise<T> {
  let work = flights.get(key);
  if (work === undefined) {
    work = start();
    flights.set(key, work);
    work.finally(() => flights.delete(key)).catch(() => {});
  }
  return work;
}
