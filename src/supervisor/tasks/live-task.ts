// A task this daemon holds in memory: from run until it has finished and its worker let go of it.
import { randomUUID } from 'node:crypto';
import type { TaskLimits } from '../../process/limits.js';
import type { RequestedSandbox, RunCaller } from './task-sandbox.js';
import { createTaskRecord, type TaskRecord } from '../model/task.js';
import type { InputRefusal } from '../../workers/protocol.js';
import type { DispatchedTask } from './worker-pool.js';
import type { FoundPorts } from '../../process/ports.js';
import type { TaskProcessesRead } from '../../process/resources.js';

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
  /** The limits the run asked for (the daemon's defaults fill in the rest). */
  limits: Partial<TaskLimits>;
  /** The sandbox the run asked for; undefined: the daemon's default, if any. */
  sandbox?: RequestedSandbox | undefined;
  /** The task that asked for this run (a call from one of its processes), or null: a call from outside the tasks. */
  caller: RunCaller | null;
}

/** A worker's answer to one input: how much of it the task has not read, or why it was refused. */
export type InputAnswer = { pendingBytes: number; refusal: InputRefusal | null };

/** A promise with its resolve, for the moments a task reaches. */
export interface Moment {
  reached: Promise<void>;
  reach(): void;
}

export function createMoment(): Moment {
  let reach = () => {};
  const reached = new Promise<void>((resolve) => (reach = resolve));
  return { reached, reach: () => reach() };
}

export interface LiveTask {
  record: TaskRecord;
  /** What run asked for, until the task is dispatched (then dropped: its stdin text may be large). */
  request: RunRequest | null;
  /** Its worker, once dispatched. */
  worker: DispatchedTask | null;
  /** The shim at the root of its process tree, once started (the native spawner only). */
  shimPid: number | null;
  /** When a kill of it was first asked for. */
  killedAt: number | null;
  /** A force kill's cgroup.kill was written by the main thread (task-control.ts): an end by SIGKILL is the kill's. */
  cgroupKilled: boolean;
  /** When its process has started (pid known) or it finished without. */
  started: Moment;
  /** When it reaches a finished state. */
  ended: Moment;
  /** When its worker lets go of it: nothing of the task is left (with the native spawner). */
  released: Moment;
  /** Interactive, and no input has closed stdin yet. */
  stdinOpen: boolean;
  /** Inputs sent to the worker and not yet answered, by request id. */
  inputs: Map<number, (answer: InputAnswer) => void>;
  /** The ports its processes listened on when last looked for; null before that, and from its end. */
  ports: FoundPorts | null;
  /** Without a cgroup: its processes as last read (task-probes.ts readNow); null before that. */
  processes: TaskProcessesRead | null;
  /** Its processes still alive when it ended by itself, as its worker counted them. */
  leftAtEnd: number;
}

export function createLiveTask(record: TaskRecord, request: RunRequest): LiveTask {
  return {
    record,
    request,
    worker: null,
    shimPid: null,
    killedAt: null,
    cgroupKilled: false,
    started: createMoment(),
    ended: createMoment(),
    released: createMoment(),
    stdinOpen: request.interactive,
    inputs: new Map(),
    ports: null,
    processes: null,
    leftAtEnd: 0,
  };
}

/** The first record of a run as task `id`, with the limits, sandbox and timeout the daemon resolved for it. */
export function recordOfRun(
  id: string,
  request: RunRequest,
  resolved: { limits: TaskLimits; sandbox: TaskRecord['sandbox']; timeoutSeconds: number | null },
): TaskRecord {
  const { timeoutSeconds } = resolved;
  return createTaskRecord({
    id,
    name: request.name,
    command: request.command,
    cwd: request.cwd,
    pty: request.terminal !== null,
    terminalSize: request.terminal,
    interactive: request.interactive,
    runKey: randomUUID(),
    timeoutMs: timeoutSeconds === null ? null : Math.round(timeoutSeconds * 1000),
    limits: resolved.limits,
    sandbox: resolved.sandbox,
  });
}
