// What only the moment knows of a task, read from the OS: processes still alive after its leader
// exited, its cgroup's figures, and whether its stdin takes input. The snapshot source of the service.
import { taskCgroupDir, type Containment } from '../../process/containment.js';
import { countLeftovers } from '../../process/leftovers.js';
import { countCgroupProcesses, NO_RESOURCES, readTaskResources, type ProcessTableCache, type TaskResources } from '../../process/resources.js';
import type { TaskRecord } from '../model/task.js';
import type { SnapshotSource } from '../model/task-snapshot.js';
import type { OutputFiles } from '../output/output-files.js';
import type { LiveTask } from './live-task.js';

export class TaskProbes implements SnapshotSource {
  constructor(
    private readonly live: ReadonlyMap<string, LiveTask>,
    private readonly containment: Containment,
    private readonly files: OutputFiles,
  ) {}

  outputPaths(id: string): { stdout: string; stderr: string } {
    return this.files.pathsOf(id);
  }

  /** Processes of a finished task still alive after its leader exited. */
  countLeftovers(record: TaskRecord): number {
    const processes = { runKey: record.runKey, pgid: record.pgid, cgroupDir: taskCgroupDir(this.containment, record.runKey) };
    if (this.containment.spawner === 'node') return countLeftovers(processes, 'group');
    // A released task's shim has exited, and it exits only once its whole subtree is gone.
    if (!this.isLive(record)) return 0;
    if (processes.cgroupDir !== null) return countCgroupProcesses(processes.cgroupDir) ?? 0;
    return countLeftovers(processes, 'anywhere');
  }

  /** CPU, memory and process figures of a task: read while its worker holds it, as recorded once it let go. */
  resourcesOf(record: TaskRecord, table?: ProcessTableCache): TaskResources {
    const task = this.live.get(record.id);
    if (task === undefined || task.record.runKey !== record.runKey || record.state === 'pending') {
      return { ...NO_RESOURCES, cpuMs: record.cpuMs, processes: record.state === 'pending' ? null : 0 };
    }
    const cgroupDir = taskCgroupDir(this.containment, record.runKey);
    if (cgroupDir !== null) return readTaskResources({ cgroupDir }, table);
    if (task.shimPid !== null) return readTaskResources({ shimPid: task.shimPid }, table);
    return record.pgid === null ? NO_RESOURCES : readTaskResources({ pgid: record.pgid }, table);
  }

  /** Whether input can write to the task now. */
  stdinOpen(record: TaskRecord): boolean {
    const task = this.live.get(record.id);
    return task !== undefined && task.record.runKey === record.runKey && task.record.state === 'running' && task.stdinOpen;
  }

  /** Whether this run of the task is still in memory: not yet let go by its worker. */
  isLive(record: TaskRecord): boolean {
    return this.live.get(record.id)?.record.runKey === record.runKey;
  }
}
