// A task's snapshot as the wire carries it (the run and status tools' results, the todo's body):
// its fields and what they hold. The daemon makes it (src/supervisor/model/task-snapshot.ts);
// hive-bash reads it.
import type { Sandbox } from './sandbox.js';
import type { TaskState } from './task-states.js';

/** One task as every reader sees it (the run and status tools, the todo body): snake_case, as on the wire. */
export interface TaskSnapshot {
  id: string;
  name: string | null;
  command: string;
  state: TaskState;
  pty: boolean;
  interactive: boolean;
  stdin_open: boolean;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  started_at: string | null;
  ended_at: string | null;
  runtime_ms: number | null;
  pid: number | null;
  pgid: number | null;
  namespace_pid: number | null;
  stdout_tail: string;
  stderr_tail: string;
  stdout_bytes: number;
  stderr_bytes: number;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  stdout_truncated_reason: string | null;
  stderr_truncated_reason: string | null;
  stdout_path: string;
  stderr_path: string;
  lingering: number;
  cpu_ms: number | null;
  memory_bytes: number | null;
  memory_peak_bytes: number | null;
  processes: number | null;
  /** The sandbox in force, or null. */
  sandbox: Sandbox | null;
  /** The limits in force, in the run's field names. */
  limits: { memory_limit_mb: number | null; max_processes: number | null; cpu_limit: number | null };
  oom_killed: boolean;
  pids_limit_hits: number | null;
  /** The TCP and UDP ports its processes listen on now: the first 100 by port. */
  ports: ListeningPort[];
  /** How many more ports they listen on than `ports` lists. */
  ports_unlisted: number;
  /** What the command policy refused and what waits for a person; only where the daemon has a policy. */
  policy?: TaskPolicyView;
}

/** A port a task's process listens on. */
export interface ListeningPort {
  protocol: 'tcp' | 'udp';
  /** The local address as printed (0.0.0.0, ::, 127.0.0.1, ...). */
  address: string;
  port: number;
  pid: number;
}

/** An exec the command policy refused, as status shows it. */
export interface DeniedExecView {
  /** The command line the shim read: the program's file name and its arguments. */
  command: string;
  /** The path executed. */
  program: string;
  /** The index of the rule in the policy file that refused it, or null for the policy's default. */
  rule: number | null;
  reason: string;
  at: string;
}

/** An exec of the task that waits for a person, as status shows it. */
export interface WaitingExecView {
  /** What hive-bash approve and deny take. */
  id: string;
  command: string;
  program: string;
  rule: number | null;
  reason: string;
  asked_at: string;
  expires_at: string;
}

/** What the command policy did in a task, as status and the todo show it (only where the daemon has a policy). */
export interface TaskPolicyView {
  denied: DeniedExecView[];
  denied_count: number;
  waiting: WaitingExecView[];
}
