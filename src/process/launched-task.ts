// What a launcher hands back for one started task, whichever way it was spawned.
import type { Readable, Writable } from 'node:stream';
import type { TaskCgroupPlan } from './limits.js';
import type { KillSignal } from '../shared/signals.js';
import type { Sandbox } from '../shared/sandbox.js';
import type { LimitFigures } from './task-cgroups.js';
import type { TaskCpuWeight } from './cpu-weight.js';

export interface LeaderExit {
  exitCode: number | null;
  signal: string | null;
  /** Spawn failure text; the task never ran. */
  error: string | null;
  endedAt: number;
  /**
   * Whether a kill's signal was sent while the leader had not yet exited (its shim says so): false
   * when the leader ended by itself before any kill reached it. Absent where the launcher cannot tell.
   */
  afterKill?: boolean;
}

export interface LaunchedTask {
  /** The read ends of the output pipes; null on a terminal, which the worker reads itself, and where the shim writes the files. */
  stdout: Readable | null;
  stderr: Readable | null;
  /**
   * Where the shim writes the output files (`output` in the request): what the task wrote to each
   * stream, kept or not, once both are at their end; null if the shim ended without saying (it was
   * killed). Null where the output comes through `stdout` and `stderr`.
   */
  outputBytes: Promise<[number, number] | null> | null;
  /** The write end of the task's stdin pipe, or null when stdin is /dev/null or the terminal. */
  stdin: Writable | null;
  /** Resolves once the leader runs, with its pid, the task's process group and when it was seen starting. */
  started: Promise<LeaderStart>;
  /** Resolves when the leader has exited (or failed to start). */
  exit: Promise<LeaderExit>;
  /** Resolves once nothing of the task is left alive. */
  gone(): Promise<void>;
  /** Sends `signal` to every process of the task. */
  signal(signal: KillSignal): void;
  /**
   * Ends the task whatever its shim does (stopped, stuck): kills the shim, then what is left of the
   * task as a killed shim's end does, and reports the leader's end if the shim had not. A no-op
   * without a shim (Node's launcher).
   */
  endStuck(): void;
  /** The CPU time the task used so far, where its cgroup counts it (one small read); else null. */
  cpuMsSoFar(): number | null;
  /** How many of the task's processes live now (once its leader has exited: what it left), read a slice at a time. */
  countAlive(): Promise<number>;
  /** What the task's limits did so far, from its cgroups (nulls where it has none). */
  limitFigures(): LimitFigures;
  /** Once the task is gone: removes what the launcher made for it (its cgroups) and returns the final figures. */
  teardown(): Promise<FinalFigures>;
  /** Hears what the command policy does with the task's execs (the native launcher with a policy). */
  onExec(listener: (event: ExecEvent) => void): void;
  /** Answers the exec that asked as `seq`: it goes on, or fails with EACCES and `reason` in the task's stderr. */
  answerExec(seq: number, allow: boolean, reason: string): void;
}

/** An exec as the shim read it: the path executed, its argv (cut: more than was read), as a command line. */
export interface ExecCall {
  path: string;
  argv: string[];
  cut: boolean;
  command: string;
}

/**
 * What the command policy did with an exec: refused it (by rule index `rule`, null for the
 * default), asked for it (it waits as `seq` for answerExec), or its ask is gone (its process died).
 */
export type ExecEvent =
  | { event: 'denied'; rule: number | null; exec: ExecCall; reason: string }
  | { event: 'ask'; seq: number; rule: number | null; exec: ExecCall }
  | { event: 'gone'; seq: number };

export interface LeaderStart {
  /** As the host sees it (where the daemon reads /proc and signals). */
  pid: number;
  pgid: number;
  /** The same leader's pid in the tasks' own PID namespace, where tasks see it; null when they share the host's. */
  namespacePid: number | null;
  /** Taken when the start was seen, not when a promise callback got to it: the exit may be seen in the same read. */
  startedAt: number;
  /** The per-task shim at the root of the task's tree (the native spawner), or null. */
  shimPid: number | null;
}

/**
 * The leader's stdio: output pipes with stdin from /dev/null or a pipe, or all three on a terminal
 * (an fd of its slave; a sandboxed task's terminal is in the detached devpts mount `devptsFd`, which
 * its leader mounts). With `output` (the native launcher only), the shim writes the pipes into those
 * files itself.
 */
export type LaunchStdio =
  { stdin: 'null' | 'pipe'; output?: OutputFiles } | { terminalFd: number; devptsFd: number | null };

/** The output files a task's shim writes (stdout, stderr): open for writing, still the caller's to close after the launch. */
export interface OutputFiles {
  fds: [number, number];
  /** Bytes kept per stream; 0: no cap. */
  maxBytes: number;
  /** Called once per stream, when its first byte is dropped. */
  onCut(stream: 'stdout' | 'stderr', cut: OutputCut): void;
}

/** Why a stream's output stopped being kept: its cap, the disk's reserve, or a failed write (the error's text). */
export type OutputCut = { cause: 'cap' } | { cause: 'reserve' } | { cause: 'write'; error: string };

export interface LaunchRequest {
  /** The task's command: bash reads it from an fd (TASK_SHELL_ARGV), so it is in no command line. */
  command: string;
  env: Record<string, string>;
  cwd: string;
  stdio: LaunchStdio;
  /** The task's cgroups, created with their limits before the spawn. */
  cgroups: TaskCgroupPlan;
  /** A pidfd of the tasks' init, whose PID and mount namespaces the task starts in; null: the daemon's. */
  namespaceFd: number | null;
  /** The tasks' CPU weight, which the native spawner takes as it starts. */
  cpuWeight: TaskCpuWeight;
  /** Set up by the shim in the leader before its exec (the native spawner only: refused at run otherwise). */
  sandbox: Sandbox | null;
  /** Whether the sandbox is had without namespaces (SandboxSupport.withoutNamespaces). */
  sandboxWithoutNamespaces: boolean;
  /** The compiled command policy the shim enforces on every exec of the task (the native spawner only), or null. */
  policy: string | null;
}

/** The fd on which a task's bash finds its command. */
export const COMMAND_FD = 3;

/**
 * What every task's leader runs: `bash -c` of a line that reads the command from COMMAND_FD, closes
 * it and evals it. The command text is then in no process's command line, so a task's `pkill -f
 * WORD` never matches its own shell (or another task's), while the command sees what `bash -c
 * COMMAND` gives it: $0 is bash, `exit`, `set -e`, a trailing `&` and the exit code work alike, and
 * $BASH_EXECUTION_STRING (which bash lets a script assign) is the command, as `bash -c` sets it.
 * What eval cannot hide: a syntax error reads `bash: eval: line N:` for `bash: -c: line N:`,
 * `set -x` marks lines `++` for `+`, and $_ is `exec` until the command's first command has run.
 * `read` stops at a NUL, which a command cannot hold.
 */
export const TASK_SHELL_ARGV: readonly string[] = [
  'bash',
  '-c',
  `IFS= read -r -d '' BASH_EXECUTION_STRING <&${COMMAND_FD}; exec ${COMMAND_FD}<&-; eval "$BASH_EXECUTION_STRING"`,
];

/** A task's figures once nothing of it is left. */
export interface FinalFigures {
  /** Its whole CPU time, where its cgroup or its shim kept it. */
  cpuMs: number | null;
  pidsLimitHits: number | null;
  memoryPeakBytes: number | null;
}

export const NO_FINAL_FIGURES: FinalFigures = { cpuMs: null, pidsLimitHits: null, memoryPeakBytes: null };
