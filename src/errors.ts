// Every error the daemon raises on purpose: one base with a stable `code` (what a client or a
// script matches on) and the `cause` kept, one subclass per failure (undici's lib/core/errors.js).
// A message names the input, echoes the value and says what would be accepted.
import { statfsSync, statSync } from 'node:fs';
import { getSystemErrorMap, getSystemErrorName } from 'node:util';
import { constants as osConstants } from 'node:os';
import { echoValue } from './shared/echo.js';

export class HiveError extends Error {
  readonly code: string = 'ERR_HIVE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A tool call the daemon refused, with the stable code of why: a tool error, never a crash. */
export class ToolRefusal extends HiveError {}

/** A tool call's arguments were wrong: a field missing, unknown, out of range, or naming nothing. */
export class ToolInputError extends ToolRefusal {
  override readonly code: string = 'ERR_INVALID_INPUT';
}

export class UnknownTaskError extends ToolInputError {
  override readonly code = 'ERR_UNKNOWN_TASK';
  constructor(id: string) {
    super(`"id" names no task: got ${JSON.stringify(id)}; call list to see the ids of known tasks`);
  }
}

/** A run from a task that names a finished task another caller's run made: a task may not replace it. */
export class NameNotOwnError extends ToolInputError {
  override readonly code = 'ERR_NAME_BUSY';
  constructor(name: string, callerTaskId: string) {
    super(
      `"name" is taken: got ${JSON.stringify(name)}, a finished task that task ${JSON.stringify(callerTaskId)}, which made this call, did not start; a run from a task reuses only the names of tasks it started: choose another name`,
    );
  }
}

export class NameBusyError extends ToolInputError {
  override readonly code = 'ERR_NAME_BUSY';
  constructor(name: string, state: string) {
    super(
      `"name" is taken: got ${JSON.stringify(name)}, whose task is still ${state}; choose another name, or wait for it to finish or kill it first`,
    );
  }
}

/**
 * A grep or wait_for pattern that took longer to match than its budget (PATTERN_BUDGET in
 * src/supervisor/output/read-pool.ts): its matching was stopped, off the main thread, and it is refused.
 */
export class PatternTooCostlyError extends ToolInputError {
  override readonly code = 'ERR_PATTERN_TOO_COSTLY';
  constructor(pattern: { source: string; tool: string; field: string }, budget: string, outcome: string) {
    super(
      `Invalid ${pattern.tool} input: "${pattern.field}" took too long to match: ${echoValue(pattern.source)} ran past its budget of ${budget}, so it was stopped; ${outcome}. ` +
        'Accepted: a pattern V8 matches within that budget, as it does literals, classes and a few quantifiers; groups with quantifiers nested in quantifiers, such as (?:a+)+ repeated, are not',
    );
  }
}

/** A screen that one call could not feed its terminal to the end of: the next call draws on from there. */
export class ScreenTooCostlyError extends ToolRefusal {
  override readonly code = 'ERR_SCREEN_TOO_COSTLY';
  constructor(id: string, size: string, drawn: number, written: number, budgetMs: number) {
    super(
      `the screen of task ${JSON.stringify(id)} is not drawn yet: its ${size} terminal was fed ${drawn} of the ${written} bytes written in the ${budgetMs} ms one call may take; call output with screen again to draw on from there (once the task has had its screen work of a minute, a call draws a recent part of the output instead, saying what it skipped), or read its text (output without screen)`,
    );
  }
}

/** run's exclusive_port names a port something already listens on. */
export class PortBusyError extends ToolRefusal {
  override readonly code = 'ERR_PORT_BUSY';
  constructor(port: number, holder: string) {
    super(
      `"exclusive_port" ${port} is taken: ${holder} already listens on it; nothing was started: kill that first, or choose another port`,
    );
  }
}

/** The pending queue is full: in tasks (--max-pending), or in the bytes its runs hold (--max-pending-bytes). */
export class QueueFullError extends ToolRefusal {
  override readonly code = 'ERR_QUEUE_FULL';
  constructor(full: { maxPending: number } | { maxPendingBytes: number; tasks: number; held: number; bytes: number }) {
    const what =
      'maxPending' in full
        ? ` (${full.maxPending} tasks, --max-pending)`
        : `: its ${full.tasks} tasks hold ${full.held} bytes of command, stdin, cwd, name, env and sandbox folders, and this run's ${full.bytes} would pass --max-pending-bytes ${full.maxPendingBytes}`;
    super(
      `the pending queue is full${what}; nothing was started: wait for tasks to finish or kill some, then call run again`,
    );
  }
}

/** A run's sandbox allows more than its limit (`beyond`: "wider than LIMIT: WHY, and LIMIT allows at most: ..."). */
export class SandboxNotAllowedError extends ToolInputError {
  override readonly code = 'ERR_SANDBOX_NOT_ALLOWED';
  constructor(source: string, beyond: string, remedy = 'ask for no more than that') {
    super(`Invalid run input: ${source} is ${beyond}; nothing was started: ${remedy}`);
  }
}

/** A call from a process that may be one of the daemon's tasks', whose task cannot be told: refused. */
export class CallerUnknownError extends ToolRefusal {
  override readonly code = 'ERR_CALLER_UNKNOWN';
  constructor(tool: string, why: string) {
    super(
      `${tool} refused: the call comes from ${why}, so which of the daemon's tasks made it, and whose sandbox bounds it, cannot be told; nothing was done: call from outside the daemon's tasks, or from a process of a task that is still running`,
    );
  }
}

/** A run's sandbox cannot be enforced on this host: refused, never run less confined. */
export class SandboxUnavailableError extends ToolRefusal {
  override readonly code = 'ERR_SANDBOX_UNAVAILABLE';
  constructor(source: string, why: string) {
    super(
      `${source} cannot be enforced here (${why}); nothing was started: a task never runs less confined than it asked. /healthz says what sandboxing this host supports`,
    );
  }
}

/**
 * A run's limit needs a cgroup controller this host gives the daemon nowhere: refused, never run
 * without it. The fault is the environment's, not the input's; the message says what gives it.
 */
export class LimitUnavailableError extends ToolRefusal {
  override readonly code = 'ERR_LIMIT_UNAVAILABLE';
  constructor(source: string, field: string, controller: string, why: string) {
    super(
      `${source} cannot be enforced here: it needs the ${controller} cgroup controller, which cannot be used here: ${why}; ${LIMITS_REMEDY}; nothing was started: run without ${field}. /healthz says where each controller is`,
    );
  }
}

/** What gives a daemon its cgroups, where it has none it may write. */
export const LIMITS_REMEDY =
  'a cgroup v2 subtree delegated to the daemon gives it (a systemd service with Delegate=yes, `systemd-run --user -p Delegate=yes hive-bash-daemon` for a user, a container run with a cgroup namespace of its own and /sys/fs/cgroup writable), or a daemon run as root on the host';

/** Why input to a task was refused; each has its own code. */
export const INPUT_REFUSALS = {
  ERR_INPUT_NOT_INTERACTIVE:
    'it was not started with interactive: true, so its stdin is /dev/null or was closed after its stdin text; run it again with interactive: true',
  ERR_INPUT_PENDING: 'it is still pending (waiting for a free slot); input is taken once it runs',
  ERR_INPUT_ENDED: 'it has ended, so its stdin is closed',
  ERR_INPUT_STDIN_CLOSED: 'its stdin was closed by an earlier input with eof: true',
  ERR_INPUT_NO_ANSWER: 'its worker did not answer in time; call status to see the task',
  ERR_INPUT_WRITE_FAILED: 'its stdin could not take the text',
  ERR_INPUT_QUEUE_FULL: 'its stdin holds as much as a task may have queued that it has not read',
  ERR_INPUT_NOT_ALLOWED: 'the call comes from a sandboxed task, and this task is not confined within that sandbox',
} as const;
export type InputRefusalCode = keyof typeof INPUT_REFUSALS;

export class InputRefusedError extends ToolRefusal {
  override readonly code: InputRefusalCode;
  constructor(taskId: string, code: InputRefusalCode, detail?: string) {
    super(`input to task ${JSON.stringify(taskId)} refused: ${detail ?? INPUT_REFUSALS[code]}`);
    this.code = code;
  }
}

/** The state dir's disk cannot take the registry's writes (full, read-only or failing): run is refused meanwhile. */
export class StateDirFullError extends ToolRefusal {
  override readonly code = 'ERR_STATE_DIR_FULL';
  constructor(stateDir: string, why: string, options?: { cause?: unknown }) {
    super(
      `the state dir ${stateDir} cannot be written now (${why}; ${describeFreeBytes(stateDir)}); nothing was started: free space there (old task output is in ${stateDir}/harness/bash-tasks) and call run again. Running tasks go on, and what they report is kept until it can be written`,
      options,
    );
  }
}

/**
 * Why `path` is not an existing directory, in a few words ("no such directory", "not a directory",
 * or the errno code), or null when it is one. The OS's own message is not used: it repeats the
 * path, which a refusal echoes itself (cut short).
 */
export function directoryProblem(path: string): string | null {
  try {
    return statSync(path).isDirectory() ? null : 'not a directory';
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    return code === 'ENOENT' ? 'no such directory' : (code ?? (error as Error).message.slice(0, 200));
  }
}

/** `123456 bytes free`, or why that cannot be read. */
export function describeFreeBytes(dir: string): string {
  try {
    const stats = statfsSync(dir);
    return `${stats.bavail * stats.bsize} bytes free`;
  } catch (error) {
    return `free space unknown: ${(error as Error).message}`;
  }
}

/** The string `code` an error carries (errno's, SQLite's), or '' when it has none. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : '';
}

/** Anything wrong on the command line or in the environment; the program exits with code 2. */
export class ConfigError extends HiveError {
  override readonly code = 'ERR_CONFIG';
}

export class StateDirBusyError extends HiveError {
  override readonly code = 'ERR_STATE_DIR_BUSY';
}

/** The registry was written by a newer daemon, whose schema this one does not know. */
export class RegistryVersionError extends HiveError {
  override readonly code = 'ERR_REGISTRY_VERSION';
}

/** Another process already serves the todo socket's path. */
export class SocketBusyError extends HiveError {
  override readonly code = 'ERR_SOCKET_BUSY';
}

/** A forced containment mode is not available on this host. */
export class ContainmentError extends HiveError {
  override readonly code = 'ERR_CONTAINMENT';
}

/** The native addon is not loaded here (another OS, or a failed build). */
export class NativeUnavailableError extends HiveError {
  override readonly code = 'ERR_NATIVE_UNAVAILABLE';
}

/**
 * A task could not be started: `call` is what failed (a syscall and its object, e.g. `posix_spawn
 * bash` or `write .../cgroup.procs`), `errno` its error number when the OS gave one.
 */
export class SpawnError extends HiveError {
  override readonly code = 'ERR_SPAWN_FAILED';
  readonly call: string;
  readonly errno: number | null;
  constructor(call: string, errno: number | null, options?: { cause?: unknown }) {
    super(`spawn failed: ${call}${errno === null ? '' : `: ${describeErrno(errno)}`}`, options);
    this.call = call;
    this.errno = errno;
  }

  /** From a failed system call: fs's errors (`syscall`, `path`) or the addon's (`CALL failed: TEXT`), both with an errno `code`. */
  static fromSystemError(error: unknown): SpawnError {
    const { code, syscall, path, message } = error as NodeJS.ErrnoException;
    const errno = code === undefined ? null : ((osConstants.errno as Record<string, number | undefined>)[code] ?? null);
    const call =
      syscall !== undefined
        ? `${syscall}${path === undefined ? '' : ` ${path}`}`
        : String(message).replace(/ failed: [^:]*$/, '');
    return new SpawnError(call, errno, { cause: error });
  }
}

/** `ENOENT (errno 2)`: an errno's name and number; `errno 999` for one the OS does not name. */
export function describeErrno(errno: number): string {
  let name: string | null = null;
  try {
    name = getSystemErrorName(-Math.abs(errno));
  } catch {
    // not an errno this platform knows
  }
  return name === null || name.startsWith('Unknown') ? `errno ${errno}` : `${name} (errno ${errno})`;
}

/** An errno in the words of Node's own error for a failed call: `ENOSPC: no space left on device, write`. */
export function systemCallError(errno: number, syscall: string): string {
  const [name, text] = getSystemErrorMap().get(-Math.abs(errno)) ?? [`errno ${errno}`, 'unknown error'];
  return `${name}: ${text}, ${syscall}`;
}
