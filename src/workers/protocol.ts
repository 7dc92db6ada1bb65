// The messages that cross the thread boundary between the supervisor and a task worker. The
// supervisor imports nothing else of src/workers/ (test/architecture.test.ts checks it).
import type { MessagePort } from 'node:worker_threads';
import type { InputRefusalCode } from '../errors.js';
import type { ExecEvent, FinalFigures, LeaderExit } from '../process/launched-task.js';
import type { TaskCgroupPlan, TaskLimits } from '../process/limits.js';
import type { KillSignal } from '../shared/signals.js';
import type { Sandbox } from '../shared/sandbox.js';
import type { TaskCpuWeight } from '../process/cpu-weight.js';
import type { OpenedTerminal } from '../process/terminals.js';

export type { KillSignal };

/** Why an input was not written: a refusal code, and words of the worker's when the code's own do not say it all. */
export interface InputRefusal {
  code: InputRefusalCode;
  detail: string | null;
}

export type StreamName = 'stdout' | 'stderr';

/** Why a task ended, when the daemon ended it; `exit` when the leader ended by itself. */
export type EndReason = 'exit' | 'killed' | 'timed_out';

/** What the supervisor hands to a worker for one task (piscina's task payload). */
export interface TaskSpec {
  taskId: string;
  /** Unique per run of a task, even when a name is reused: the marker in the task's environment. */
  runKey: string;
  command: string;
  cwd: string;
  env: Record<string, string>;
  /** Text written to stdin first; then stdin is closed unless the task is interactive. */
  stdin: string | null;
  /** Stdin stays open for input messages (a pipe, or the terminal). */
  interactive: boolean;
  /**
   * The task's pseudo-terminal, opened by the supervisor (which hosts node-pty): the master's fd,
   * which the worker owns from now on, and the slave's path, which it opens as the task's stdio;
   * for a sandboxed task, the detached devpts mount it is in, which the worker owns too.
   * null: pipes.
   */
  terminal: OpenedTerminal | null;
  stdoutPath: string;
  stderrPath: string;
  /** Bytes kept per stream; 0: no cap. */
  maxOutputBytes: number;
  /** null: no time limit. */
  timeoutMs: number | null;
  killGraceMs: number;
  /** How the task is started and contained (chosen once by the supervisor at start-up). */
  spawner: 'native' | 'node';
  /** A pidfd of the tasks' init (the native spawner's tasks start in its PID and mount namespaces), or null. */
  namespaceFd: number | null;
  /** The tasks' CPU weight, which the native spawner takes as it starts. */
  cpuWeight: TaskCpuWeight;
  /** The sandbox the shim sets up in the leader, or null. */
  sandbox: Sandbox | null;
  /** Whether the sandbox is had without namespaces (SandboxSupport.withoutNamespaces). */
  sandboxWithoutNamespaces: boolean;
  /** The task's cgroups with their limits (created by the worker): none under process-group containment without limits. */
  cgroups: TaskCgroupPlan;
  limits: TaskLimits;
  /** The operator's command policy as the shim reads it (process/exec-policy.ts), or null: none. */
  policy: string | null;
}

/**
 * The port handshake, the first piscina job each worker thread gets: the MessagePort that all of
 * its tasks report on and take control messages from, addressed by run key. One port per thread,
 * not a MessageChannel per task: a channel costs about 15 KB, a task's run key addresses it as
 * well. The handshake is held for the thread's life (so piscina, which gives a job to its least
 * busy thread, hands one to each); a thread that has a port already answers it at once, not ok.
 */
export interface PortHandshake {
  attach: MessagePort;
}

/** Worker → supervisor on a thread's port: `accepted` first, once the worker takes control messages for the run; then its reports. */
export type ReportEnvelope = { runKey: string; message: ReportMessage | { type: 'accepted' } };
/** Supervisor → worker on the port of the thread running `runKey`. */
export type ControlEnvelope = { runKey: string; message: ControlMessage };

/** Supervisor → worker. An input is answered by an `input-done` report with the same requestId. */
export type ControlMessage =
  | { type: 'kill'; signal: KillSignal }
  | { type: 'input'; requestId: number; text: string; eof: boolean }
  /** The answer to an exec that asked (exec-ask): it goes on, or fails with EACCES and `reason`. */
  | { type: 'exec-answer'; seq: number; allow: boolean; reason: string };

/** Worker → supervisor, in the order they happen for a task (input-done whenever an input was written). */
export type ReportMessage =
  /** An input was written (or refused); pendingBytes of it the task has not read yet. */
  | { type: 'input-done'; requestId: number; pendingBytes: number; refusal: InputRefusal | null }
  | {
      type: 'started';
      pid: number;
      pgid: number;
      namespacePid: number | null;
      startedAt: number;
      shimPid: number | null;
    }
  | { type: 'truncated'; stream: StreamName; reason: string }
  | ExecReport
  | EndedReport
  /** Output pipes closed and the kill escalation (if any) finished: the worker lets go of the task. */
  | ReleasedReport
  /** Both at once, when nothing of the task was left by its end (the usual case): one message, not two. */
  | { type: 'ended-and-released'; ended: EndedReport; released: ReleasedReport };

/** What the command policy did with an exec of the task (process/launched-task.ts's ExecEvent). */
export type ExecReport = { type: 'exec' } & ExecEvent;

/** The leader's end (LeaderExit: its code, signal or spawn failure, and when), and the figures so far, where cgroups count them: the whole counts come with the release. */
export type EndedReport = {
  type: 'ended';
  reason: EndReason;
  /** The kernel's OOM killer ended it at its memory limit. */
  oomKilled: boolean;
  /** Its processes still alive when its end is reported: what its leader left (0 with the release). */
  left: number;
} & LeaderExit &
  FinalFigures;

export type ReleasedReport = { type: 'released'; stdoutBytes: number; stderrBytes: number } & FinalFigures;

/**
 * What the piscina task resolves to. Errors travel inside it, never as a throw. The supervisor reads
 * it only for a failure: a run's end and release are its reports.
 */
export interface TaskOutcome {
  ok: boolean;
  error?: string;
}
