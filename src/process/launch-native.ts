// Starts a task through the native addon: the thread's spawner starts the per-task shim (no
// fork() of the daemon), which leads the task's session, reaps its subtree, starts the leader in
// the task's cgroup and reports on fd 4. Its fd 3 (control) and fd 4 (status) are the same end of
// one socket pair, so a task holds one fd and one socket here for both; fd 5 holds the command
// (the leader's COMMAND_FD); in the tasks' own PID namespace, fd 6 is the host's /proc, where the
// shim finds the leader's pid as the daemon sees it.
import { closeSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { SpawnError } from '../errors.js';
import { readLines } from '../shared/line-reader.js';
import { NO_FINAL_FIGURES, TASK_SHELL_ARGV, type LaunchedTask, type LaunchRequest, type LeaderExit, type LeaderStart } from './launched-task.js';
import type { TaskCgroupPlan } from './limits.js';
import { killOrphans, type TaskProcesses } from './leftovers.js';
import { nativeAddon, SHIM_NAME, SHIM_PATH } from './native.js';
import { readCpuMs } from './resources.js';
import { RUN_MARKER_NAME } from './process-table.js';
import { exitCodeOfSignal, signalName, signalNumber, type KillSignal } from './signals.js';
import { sandboxShimArgs } from './sandbox.js';
import { spawnThroughSpawner, type SpawnAnswer } from './spawner-client.js';
import { createTaskCgroups, joinedDirs, NO_LIMIT_FIGURES, readLimitFigures, removeTaskCgroups } from './task-cgroups.js';

/** This thread's fd of the host's /proc, opened once (the shims in the tasks' namespace get it). */
let hostProc: number | null = null;

/** Spawns the shim for `request`; a spawn failure comes back as the exit, never as a throw. */
export function launchNative(request: LaunchRequest): LaunchedTask {
  const addon = nativeAddon();
  const owned: number[] = [];
  const pipe = (): [number, number] => {
    const ends = addon.pipe();
    owned.push(...ends);
    return ends;
  };
  const { stdio } = request;
  const terminalFd = 'terminalFd' in stdio ? stdio.terminalFd : -1;
  let devNull = -1;
  let ends: number[];
  try {
    // [child stdin, our end, our stdout end, child stdout, our stderr end, child stderr]; -1: none.
    if (terminalFd !== -1) ends = [terminalFd, -1, -1, terminalFd, -1, terminalFd];
    else {
      devNull = 'stdin' in stdio && stdio.stdin === 'null' ? openSync('/dev/null', 'r') : -1;
      ends = [...(devNull === -1 ? pipe() : [devNull, -1]), ...pipe(), ...pipe()];
    }
    const channel = addon.socketPair();
    owned.push(...channel);
    ends.push(...channel);
    const command = addon.textFd(request.command);
    owned.push(command);
    ends.push(command);
    if (request.namespaceFd !== null) hostProc ??= openSync('/proc', 'r');
  } catch (error) {
    // Out of fds, typically: give back what was taken and fail this task alone.
    for (const fd of owned) addon.close(fd);
    if (devNull !== -1) closeSync(devNull);
    return failedLaunch(SpawnError.fromSystemError(error), request.cgroups);
  }
  const [childStdin, stdinWrite, stdoutRead, stdoutWrite, stderrRead, stderrWrite, channelOurs, channelTheirs, command] = ends as number[] & { length: 9 };
  // The shim reads control lines on fd 3 and writes status lines on fd 4: both are its end of the channel.
  const childEnds = [childStdin!, stdoutWrite!, stderrWrite!, channelTheirs!, channelTheirs!, command!, ...(request.namespaceFd === null ? [] : [hostProc!])];
  const shimOptions = ['-s', '5', ...(request.namespaceFd === null ? [] : ['-P', '6']), ...(terminalFd === -1 ? [] : ['-t']), ...sandboxShimArgs(request.sandbox)];
  let spawned: Promise<SpawnAnswer> | null = null;
  let failure: SpawnError | null = null;
  try {
    createTaskCgroups(request.cgroups);
    spawned = spawnThroughSpawner((spawnerPid) => ({
      path: SHIM_PATH,
      argv: [SHIM_NAME, ...shimOptions, ...joinedDirs(request.cgroups).flatMap((dir) => ['-j', dir]), String(spawnerPid), request.cgroups.v2?.dir ?? '-', ...TASK_SHELL_ARGV],
      env: Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
      cwd: request.cwd,
      fds: childEnds,
    }), request.namespaceFd);
  } catch (error) {
    failure = SpawnError.fromSystemError(error);
  }
  // The request carries the child's fds: ours can go now. The terminal's fd is the caller's to
  // close. fs.openSync'd fds must go back through fs.closeSync: a worker thread tracks them, and
  // warns when a number it thinks is still open comes back from another open.
  for (const fd of new Set(childEnds)) if (fd !== terminalFd && fd !== hostProc) (fd === devNull ? closeSync : addon.close)(fd);
  if (spawned === null) {
    for (const fd of [stdinWrite!, stdoutRead!, stderrRead!, channelOurs!]) if (fd !== -1) addon.close(fd);
    return failedLaunch(failure ?? new SpawnError('spawn request', null), request.cgroups);
  }
  const readEnd = (fd: number) => (fd === -1 ? null : new Socket({ fd, readable: true, writable: false }));
  const [stdout, stderr] = [readEnd(stdoutRead!), readEnd(stderrRead!)];
  const channel = new Socket({ fd: channelOurs!, readable: true, writable: true });
  const stdin = stdinWrite === -1 ? null : new Socket({ fd: stdinWrite!, readable: false, writable: true });
  channel.on('error', () => {}); // a write after the shim exited; its end is seen as 'close'
  stdin?.on('error', () => {});
  const runKey = request.env[RUN_MARKER_NAME] ?? null;
  return trackShim({ stdout, stderr, channel, stdin }, spawned, { runKey: runKey ?? '', pgid: null, cgroupDir: request.cgroups.v2?.dir ?? null }, request);
}

interface ShimStreams {
  stdout: Socket | null;
  stderr: Socket | null;
  /** Status lines from the shim; control lines to it. It closes when the shim exits. */
  channel: Socket;
  stdin: Socket | null;
}

function trackShim(streams: ShimStreams, spawned: Promise<SpawnAnswer>, task: TaskProcesses, { cwd, cgroups }: LaunchRequest): LaunchedTask {
  let resolveStarted!: (value: LeaderStart) => void;
  let resolveExit!: (value: LeaderExit) => void;
  const started = new Promise<LeaderStart>((resolve) => (resolveStarted = resolve));
  const exit = new Promise<LeaderExit>((resolve) => (resolveExit = resolve));
  let startError: SpawnError | null = null;
  /** The CPU time of the task's whole subtree, which the shim reports as it exits. */
  let subtreeCpuMs: number | null = null;
  let exitReported = false;
  const onLine = (line: string) => {
    const space = line.indexOf(' ');
    const [word, value] = [line.slice(0, space), line.slice(space + 1)];
    if (word === 'start') {
      const startedAt = Date.now();
      // "start PID" or, in the tasks' own namespace, "start PID HOST_PID".
      const [inner, outer] = value.split(' ').map(Number);
      const pid = outer ?? inner!;
      const namespacePid = outer === undefined ? null : inner!;
      // The spawner's answer (the shim's pid) comes on another socket, normally well before this.
      void spawned.then((answer) => resolveStarted({ pid, pgid: pid, namespacePid, startedAt, shimPid: 'pid' in answer ? answer.pid : null }));
    } else if (word === 'cpu') subtreeCpuMs = Math.round(Number(value) / 1000);
    else if (word === 'error') startError = parseShimError(value);
    else if (word === 'exit' || word === 'signal') {
      exitReported = true;
      const number = Number(value);
      // A leader that failed before exec never ran: its exit is the failure, with no exit code.
      if (startError !== null) resolveExit({ exitCode: null, signal: null, error: startError.message, endedAt: Date.now() });
      else if (word === 'exit') resolveExit({ exitCode: number, signal: null, error: null, endedAt: Date.now() });
      else resolveExit({ exitCode: exitCodeOfSignal(number), signal: signalName(number), error: null, endedAt: Date.now() });
    }
  };
  readLines(streams.channel, onLine);
  // The channel closes when the shim exits (normally its whole subtree is gone by then), or when
  // the spawner could not start it (the spawner closes the shim's end).
  const gone = new Promise<void>((resolve) => streams.channel.once('close', () => resolve()));
  void Promise.all([gone, spawned]).then(([, answer]) => {
    if (exitReported) return;
    if ('error' in answer) {
      const error = new SpawnError(`start hive-task-shim in ${cwd}${answer.errno === null ? ` (${answer.error})` : ''}`, answer.errno);
      resolveExit({ exitCode: null, signal: null, error: error.message, endedAt: Date.now() });
      return;
    }
    // The shim died before its task (killed from outside, or its spawner died): end what it held.
    // The end is reported whatever that kill meets: a throw here would leave the task running for good.
    try {
      killOrphans(task);
    } finally {
      resolveExit({ exitCode: null, signal: null, error: startError?.message ?? 'the task ended without reporting its exit (its shim was killed)', endedAt: Date.now() });
    }
  });
  return {
    stdout: streams.stdout,
    stderr: streams.stderr,
    stdin: streams.stdin,
    started,
    exit,
    gone: () => gone,
    signal(signal: KillSignal) {
      if (!streams.channel.destroyed) streams.channel.write(`kill ${signalNumber(signal)}\n`);
    },
    // The shim is the spawner's child and reaped there; what is left here is its cgroup. The
    // cgroup's CPU figure counts what escaped the shim's subtree too; without one the shim's does.
    cpuMsSoFar: () => (cgroups.v2 === null ? subtreeCpuMs : readCpuMs(cgroups.v2.dir)),
    limitFigures: () => readLimitFigures(cgroups),
    release: async () => {
      const { pidsLimitHits, memoryPeakBytes } = readLimitFigures(cgroups);
      return { cpuMs: (await removeTaskCgroups(cgroups)) ?? subtreeCpuMs, pidsLimitHits, memoryPeakBytes };
    },
  };
}

/** The shim's `error ERRNO CALL` line (native/src/shim.c) as the one spawn error type. */
function parseShimError(text: string): SpawnError {
  const match = /^(\d+) (.+)$/s.exec(text);
  return match ? new SpawnError(match[2]!, Number(match[1])) : new SpawnError(text, null);
}

function failedLaunch(error: SpawnError, cgroups: TaskCgroupPlan): LaunchedTask {
  void removeTaskCgroups(cgroups);
  return {
    stdout: null,
    stderr: null,
    stdin: null,
    started: new Promise(() => {}),
    exit: Promise.resolve({ exitCode: null, signal: null, error: error.message, endedAt: Date.now() }),
    gone: () => Promise.resolve(),
    signal() {},
    cpuMsSoFar: () => null,
    limitFigures: () => NO_LIMIT_FIGURES,
    release: async () => NO_FINAL_FIGURES,
  };
}
