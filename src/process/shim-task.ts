// A task as its shim runs it: the shim's status lines (the status protocol, a table at the top of
// native/src/shim-status.c) become the task's start, exit and output, a kill becomes a control
// line, and a shim that dies before reporting its task's end takes the task's orphans with it.
import type { Socket } from 'node:net';
import { writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { SpawnError, systemCallError } from '../errors.js';
import { readLines } from '../shared/line-reader.js';
import { execAnswerLine, parseExecLine } from './exec-lines.js';
import {
  NO_FINAL_FIGURES,
  type ExecEvent,
  type LaunchedTask,
  type LaunchRequest,
  type LeaderExit,
  type LeaderStart,
  type OutputCut,
  type OutputFiles,
} from './launched-task.js';
import type { TaskCgroupPlan } from './limits.js';
import { killOrphans, type TaskProcesses } from './leftover-processes.js';
import { runMarker } from './process-table.js';
import { nativeAddon } from './native.js';
import { countCgroupProcesses, readCpuMs, readTaskProcesses } from './resources.js';
import { exitCodeOfSignal, signalName, signalNumber, type KillSignal } from '../shared/signals.js';
import type { SpawnAnswer } from './spawner-client.js';
import { NO_LIMIT_FIGURES, readLimitFigures, removeTaskCgroups } from './task-cgroups.js';

export interface ShimStreams {
  stdout: Socket | null;
  stderr: Socket | null;
  /** Status lines from the shim; control lines to it. It closes when the shim exits. */
  channel: Socket;
  /** The channel's fd, which control lines are written to (`writeControl`). */
  channelFd: number;
  stdin: Socket | null;
}

/** What a shim's status lines have told of its task so far, and the start and exit they make. */
class ShimStatus {
  readonly started: Promise<LeaderStart>;
  readonly exit: Promise<LeaderExit>;
  /** Where the shim writes the output files: the bytes it wrote to each, or null if it ended unsaid. */
  readonly outputBytes: Promise<[number, number] | null> | null;
  resolveExit!: (value: LeaderExit) => void;
  resolveOutput: (bytes: [number, number] | null) => void = () => {};
  private resolveStarted!: (value: LeaderStart) => void;
  /** Why the leader could not be started (an `error` line); it then never ran. */
  startError: SpawnError | null = null;
  /** The CPU time of the task's whole subtree, which the shim reports as it exits. */
  subtreeCpuMs: number | null = null;
  exitReported = false;
  /** A kill's signal was sent while the leader had not exited (a `signalled` line). */
  signalled = false;
  /** The task is being ended without its shim's report (endWithoutShim). */
  endingWithoutShim = false;
  /** The leader's pid, its process group's id too, once the shim reports the start. */
  leaderPid: number | null = null;
  execListener: ((event: ExecEvent) => void) | null = null;

  constructor(
    private readonly spawned: Promise<SpawnAnswer>,
    private readonly output: OutputFiles | undefined,
  ) {
    this.started = new Promise((resolve) => (this.resolveStarted = resolve));
    this.exit = new Promise((resolve) => (this.resolveExit = resolve));
    this.outputBytes = output ? new Promise((resolve) => (this.resolveOutput = resolve)) : null;
  }

  /** One status line: a word, then a space and its value where it has one (the table at the top of native/src/shim-status.c). */
  onLine(line: string): void {
    const space = line.indexOf(' ');
    const [word, value] = space < 0 ? [line, ''] : [line.slice(0, space), line.slice(space + 1)];
    if (word === 'start') this.onStart(value);
    else if (word === 'cpu') this.subtreeCpuMs = Math.round(Number(value) / 1000);
    else if (word === 'truncated') this.onTruncated(value);
    else if (word === 'output') {
      const [stdoutBytes, stderrBytes] = value.split(' ').map(Number);
      this.resolveOutput([stdoutBytes!, stderrBytes!]);
    } else if (word === 'error') this.startError = parseShimError(value);
    else if (word === 'signalled') this.signalled = true;
    else if (word.startsWith('policy-')) {
      const event = parseExecLine(word, value);
      if (event !== null) this.execListener?.(event);
    } else if (word === 'exit' || word === 'signal') this.onExit(word, Number(value));
  }

  /** "start PID" or, in the tasks' own namespace, "start PID HOST_PID". */
  private onStart(value: string): void {
    const startedAt = Date.now();
    const [inner, outer] = value.split(' ').map(Number);
    const pid = outer ?? inner!;
    const namespacePid = outer === undefined ? null : inner!;
    this.leaderPid = pid;
    // The spawner's answer (the shim's pid) comes on another socket, normally well before this.
    void this.spawned.then((answer) =>
      this.resolveStarted({ pid, pgid: pid, namespacePid, startedAt, shimPid: 'pid' in answer ? answer.pid : null }),
    );
  }

  /** "truncated STREAM cap|reserve|write ERRNO" */
  private onTruncated(value: string): void {
    const [stream, cause, errno] = value.split(' ');
    if (stream === 'stdout' || stream === 'stderr') this.output?.onCut(stream, parseCut(cause, errno));
  }

  /** "exit CODE" or "signal NUMBER": the leader's end, or its failure before exec if an error came first. */
  private onExit(word: 'exit' | 'signal', number: number): void {
    this.exitReported = true;
    const endedAt = Date.now();
    // A leader that failed before exec never ran: its exit is the failure, with no exit code.
    const leaderExit: LeaderExit =
      this.startError !== null
        ? { exitCode: null, signal: null, error: this.startError.message, endedAt }
        : word === 'exit'
          ? { exitCode: number, signal: null, error: null, endedAt, afterKill: this.signalled }
          : {
              exitCode: exitCodeOfSignal(number),
              signal: signalName(number),
              error: null,
              endedAt,
              afterKill: this.signalled,
            };
    // After the start, which waits for the spawner's answer: the end (and the release that can
    // follow it at once) must not overtake the start, which would come too late to be heard.
    void this.spawned.then(() => this.resolveExit(leaderExit));
  }
}

/** The task that the shim `spawned` runs, as its status lines on `streams.channel` tell it. */
export function trackShim(
  streams: ShimStreams,
  spawned: Promise<SpawnAnswer>,
  task: Omit<TaskProcesses, 'pgid'>,
  { cwd, cgroups, stdio }: LaunchRequest,
): LaunchedTask {
  const status = new ShimStatus(spawned, 'output' in stdio ? stdio.output : undefined);
  readLines(streams.channel, (line) => status.onLine(line));
  // The channel closes when the shim exits (normally its whole subtree is gone by then), or when
  // the spawner could not start it (the spawner closes the shim's end).
  const gone = new Promise<void>((resolve) =>
    streams.channel.once('close', () => {
      status.resolveOutput(null); // its copying ended with it, unsaid
      resolve();
    }),
  );
  void Promise.all([gone, spawned]).then(([, answer]) => {
    if (!status.exitReported) endUnreported(status, answer, task, cwd);
  });
  const shim = openShimPidfd(spawned, streams.channel, gone);
  return {
    stdout: streams.stdout,
    stderr: streams.stderr,
    outputBytes: status.outputBytes,
    stdin: streams.stdin,
    started: status.started,
    exit: status.exit,
    gone: () => gone,
    signal(signal: KillSignal) {
      // A shim that was stopped would take no kill: it is continued with each one (its spawner
      // continues a stopped shim at once, unless it is stopped itself).
      signalShim(shim, 'SIGCONT');
      writeControl(streams, `kill ${signalNumber(signal)}\n`);
    },
    endStuck() {
      signalShim(shim, 'SIGKILL');
      endWithoutShim(status, task, 'its shim did not end it, and was killed');
    },
    // The shim is the spawner's child and reaped there; what is left here is its cgroup. The
    // cgroup's CPU figure counts what escaped the shim's subtree too; without one the shim's does.
    cpuMsSoFar: () => (cgroups.v2 === null ? status.subtreeCpuMs : readCpuMs(cgroups.v2.dir)),
    async countAlive() {
      if (task.cgroupDir !== null) return countCgroupProcesses(task.cgroupDir) ?? 0;
      const answer = await spawned;
      if (!('pid' in answer)) return 0;
      return (await readTaskProcesses({ shimPid: answer.pid }, runMarker(task.runKey))).pids.length;
    },
    limitFigures: () => readLimitFigures(cgroups),
    teardown: async () => {
      const { pidsLimitHits, memoryPeakBytes } = readLimitFigures(cgroups);
      return { cpuMs: (await removeTaskCgroups(cgroups)) ?? status.subtreeCpuMs, pidsLimitHits, memoryPeakBytes };
    },
    onExec: (listener) => (status.execListener = listener),
    answerExec: (seq, allow, reason) => writeControl(streams, execAnswerLine(seq, allow, reason)),
  };
}

/** Ends a task whose shim is gone without reporting its exit: it never started, or it was killed. */
function endUnreported(status: ShimStatus, answer: SpawnAnswer, task: Omit<TaskProcesses, 'pgid'>, cwd: string): void {
  if ('error' in answer) {
    const error = new SpawnError(
      `start hive-task-shim in ${cwd}${answer.errno === null ? ` (${answer.error})` : ''}`,
      answer.errno,
    );
    status.resolveExit({ exitCode: null, signal: null, error: error.message, endedAt: Date.now() });
    return;
  }
  // The shim died before its task (killed from outside, or its spawner died): end what it held.
  endWithoutShim(status, task, 'its shim was killed');
}

/**
 * Ends what is left of a task without its shim, once, and reports the leader's end (with `why` the
 * shim did not) unless the shim did. The end is reported whatever that kill meets: a throw there
 * would leave the task running for good.
 */
function endWithoutShim(status: ShimStatus, task: Omit<TaskProcesses, 'pgid'>, why: string): void {
  if (status.endingWithoutShim) return;
  status.endingWithoutShim = true;
  void killOrphans({ ...task, pgid: status.leaderPid }).finally(() => {
    if (status.exitReported) return;
    status.resolveExit({
      exitCode: null,
      signal: null,
      error: status.startError?.message ?? `the task ended without reporting its exit (${why})`,
      endedAt: Date.now(),
    });
  });
}

/** A pidfd of a task's shim, -1 until the spawner's answer and once the shim is gone. */
interface ShimPidfd {
  fd: number;
}

/** Opens a pidfd of the shim once the spawner answers, while its channel is open (so the pid is still the shim's). */
function openShimPidfd(spawned: Promise<SpawnAnswer>, channel: Socket, gone: Promise<void>): ShimPidfd {
  const shim: ShimPidfd = { fd: -1 };
  void spawned.then((answer) => {
    if (!('pid' in answer) || channel.destroyed) return;
    try {
      shim.fd = nativeAddon().pidfdOpen(answer.pid);
    } catch {
      return; // gone already
    }
    void gone.then(() => {
      nativeAddon().close(shim.fd);
      shim.fd = -1;
    });
  });
  return shim;
}

/** Sends `signal` to the shim itself, if it is still there. */
function signalShim(shim: ShimPidfd, signal: 'SIGCONT' | 'SIGKILL'): void {
  if (shim.fd < 0) return;
  try {
    nativeAddon().sendSignal(shim.fd, osConstants.signals[signal]);
  } catch {
    // exited meanwhile
  }
}

/** The shim's `error ERRNO CALL` line (native/src/shim-status.c) as the one spawn error type. */
function parseShimError(text: string): SpawnError {
  const match = /^(\d+) (.+)$/s.exec(text);
  return match ? new SpawnError(match[2]!, Number(match[1])) : new SpawnError(text, null);
}

/** The cause words of a `truncated` line. */
function parseCut(cause: string | undefined, errno: string | undefined): OutputCut {
  if (cause === 'cap' || cause === 'reserve') return { cause };
  return { cause: 'write', error: systemCallError(Number(errno), 'write') };
}

export function failedLaunch(error: SpawnError, cgroups: TaskCgroupPlan): LaunchedTask {
  void removeTaskCgroups(cgroups);
  return {
    stdout: null,
    stderr: null,
    outputBytes: null,
    stdin: null,
    started: new Promise(() => {}),
    exit: Promise.resolve({ exitCode: null, signal: null, error: error.message, endedAt: Date.now() }),
    gone: () => Promise.resolve(),
    signal() {},
    endStuck() {},
    cpuMsSoFar: () => null,
    countAlive: () => Promise.resolve(0),
    limitFigures: () => NO_LIMIT_FIGURES,
    teardown: () => Promise.resolve(NO_FINAL_FIGURES),
    onExec() {},
    answerExec() {},
  };
}

/**
 * Writes a control line to the shim on the channel's fd, past the stream: a write that the shim's
 * exit refuses (EPIPE) would destroy the socket, and the status lines not yet read with it (the
 * task's exit among them), which then read as a shim killed before its task. That happens when the
 * task ends as a kill is sent, as a force kill's own cgroup.kill makes it do (task-control.ts).
 * A line the socket cannot take now (never seen: the shim reads at once) is written again a moment
 * later, still past the stream, until the shim takes it or exits.
 */
function writeControl(streams: ShimStreams, line: string): void {
  if (streams.channel.destroyed) return; // its fd is closed, and its number may be another file's
  try {
    writeSync(streams.channelFd, line);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EAGAIN') setTimeout(writeControl, 1, streams, line);
    // else the shim has exited: what it said is still read to the end
  }
}
