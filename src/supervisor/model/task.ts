// The task model: a task's record (its states are the API's, src/shared/task-states.ts). Every layer
// (registry, lifecycle, todos, MCP) speaks of tasks in these terms; none of it knows SQLite or MCP.
import type { TaskLimits } from '../../process/limits.js';
import type { Sandbox } from '../../shared/sandbox.js';
import type { TaskState } from '../../shared/task-states.js';
import { NO_DENIALS, type ExecDenials } from './exec-denials.js';

export interface TaskRecord {
  id: string;
  /** The caller's name, or null for a generated id. */
  name: string | null;
  command: string;
  cwd: string;
  /** Runs on a pseudo-terminal. */
  pty: boolean;
  /** The size of its terminal (a pty task's), or null. */
  terminalSize: { cols: number; rows: number } | null;
  /** Its stdin stays open for the input tool. */
  interactive: boolean;
  state: TaskState;
  /** Unique per run of a task, even when a name is reused: the marker in its processes' environment. */
  runKey: string;
  timeoutMs: number | null;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  /** The leader's pid and group as the host sees them. */
  pid: number | null;
  pgid: number | null;
  /** The leader's pid in the tasks' own PID namespace (what tasks see); null when they share the host's. */
  namespacePid: number | null;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** CPU time of all the task's processes, kept at its release (its cgroup's count, else its shim's reaped subtree); null until then, and under Node's spawn. */
  cpuMs: number | null;
  /** A todo for this task has been queued for the harness and not cleared since. */
  todoShown: boolean;
  /** Why each truncated stream was cut (the cap, a nearly full disk, a failed write). */
  truncation: { stdout: string | null; stderr: string | null };
  /** The limits in force for this run. */
  limits: TaskLimits;
  /** The sandbox in force for this run, or null. */
  sandbox: Sandbox | null;
  /** The kernel's OOM killer ended it at its memory limit. */
  oomKilled: boolean;
  /** Forks refused at its process limit, where it had one; null without. */
  pidsLimitHits: number | null;
  /** The most memory it used at once, where its cgroup kept that figure. */
  memoryPeakBytes: number | null;
  /** The execs the command policy refused. */
  denials: ExecDenials;
}

/** What run decides of a new task; the rest starts empty. */
export type NewTask = Pick<
  TaskRecord,
  | 'id'
  | 'name'
  | 'command'
  | 'cwd'
  | 'pty'
  | 'terminalSize'
  | 'interactive'
  | 'runKey'
  | 'timeoutMs'
  | 'limits'
  | 'sandbox'
>;

/** A new task's record: pending, nothing run yet. */
export function createTaskRecord(task: NewTask): TaskRecord {
  return {
    ...task,
    state: 'pending',
    exitCode: null,
    signal: null,
    error: null,
    createdAt: Date.now(),
    startedAt: null,
    endedAt: null,
    pid: null,
    pgid: null,
    namespacePid: null,
    stdoutTruncated: false,
    stderrTruncated: false,
    cpuMs: null,
    todoShown: false,
    oomKilled: false,
    pidsLimitHits: null,
    memoryPeakBytes: null,
    truncation: { stdout: null, stderr: null },
    denials: NO_DENIALS,
  };
}
