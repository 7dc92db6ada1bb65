// Starts a task through the native addon: the thread's spawner posix_spawns the per-task shim (no
// fork() of the daemon), which leads the task's session, reaps its subtree, starts the leader in
// the task's cgroup and reports on fd 4. Its fd 3 (control) and fd 4 (status) are the same end of
// one socket pair, so a task holds one fd and one socket here for both.
import { closeSync, mkdirSync, openSync, rmdirSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LaunchedTask, LaunchRequest, LeaderExit, LeaderStart } from './launched-task.js';
import { nativeAddon, SHIM_PATH, type NativeError } from './native.js';
import { hasEnvironmentMarker, listMarkedProcesses } from './process-table.js';
import { spawnThroughSpawner, type SpawnAnswer } from './spawner.js';
import { readLines } from '../agent-socket/json-lines.js';
import { readCpuMs } from './task-resources.js';
import { RUN_MARKER_NAME, type KillSignal } from './protocol.js';

const signalName = (number: number): string | null =>
  (Object.entries(osConstants.signals).find(([, value]) => value === number)?.[0] as string | undefined) ?? null;

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
  } catch (error) {
    // Out of fds, typically: give back what was taken and fail this task alone.
    for (const fd of owned) addon.close(fd);
    if (devNull !== -1) closeSync(devNull);
    return failedLaunch(`spawn failed: ${(error as Error).message}`, request.cgroupDir);
  }
  const [childStdin, stdinWrite, stdoutRead, stdoutWrite, stderrRead, stderrWrite, channelOurs, channelTheirs] = ends as number[] & { length: 8 };
  // The shim reads control lines on fd 3 and writes status lines on fd 4: both are its end of the channel.
  const childEnds = [childStdin!, stdoutWrite!, stderrWrite!, channelTheirs!, channelTheirs!];
  let spawned: Promise<SpawnAnswer> | null = null;
  let failure: string | null = null;
  try {
    // recursive: another daemon that shared the root may have removed it at its stop.
    if (request.cgroupDir !== null) mkdirSync(request.cgroupDir, { recursive: true });
    spawned = spawnThroughSpawner((spawnerPid) => ({
      path: SHIM_PATH,
      argv: [SHIM_PATH, ...(terminalFd === -1 ? [] : ['-t']), String(spawnerPid), request.cgroupDir ?? '-', ...request.argv],
      env: Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
      cwd: request.cwd,
      fds: childEnds,
    }));
  } catch (error) {
    failure = `spawn failed: ${(error as NativeError).code ?? ''} ${(error as Error).message}`.trim();
  }
  // The request carries the child's fds: ours can go now. The terminal's fd is the caller's to
  // close. fs.openSync'd fds must go back through fs.closeSync: a worker thread tracks them, and
  // warns when a number it thinks is still open comes back from another open.
  for (const fd of new Set(childEnds)) if (fd !== terminalFd) (fd === devNull ? closeSync : addon.close)(fd);
  if (spawned === null) {
    for (const fd of [stdinWrite!, stdoutRead!, stderrRead!, channelOurs!]) if (fd !== -1) addon.close(fd);
    return failedLaunch(failure ?? 'spawn failed', request.cgroupDir);
  }
  const readEnd = (fd: number) => (fd === -1 ? null : new Socket({ fd, readable: true, writable: false }));
  const [stdout, stderr] = [readEnd(stdoutRead!), readEnd(stderrRead!)];
  const channel = new Socket({ fd: channelOurs!, readable: true, writable: true });
  const stdin = stdinWrite === -1 ? null : new Socket({ fd: stdinWrite!, readable: false, writable: true });
  channel.on('error', () => {}); // a write after the shim exited; its end is seen as 'close'
  stdin?.on('error', () => {});
  const runKey = request.env[RUN_MARKER_NAME] ?? null;
  return trackShim({ stdout, stderr, channel, stdin }, spawned, request.cgroupDir, runKey);
}

interface ShimStreams {
  stdout: Socket | null;
  stderr: Socket | null;
  /** Status lines from the shim; control lines to it. It closes when the shim exits. */
  channel: Socket;
  stdin: Socket | null;
}

function trackShim(streams: ShimStreams, spawned: Promise<SpawnAnswer>, cgroupDir: string | null, runKey: string | null): LaunchedTask {
  let resolveStarted!: (value: LeaderStart) => void;
  let resolveExit!: (value: LeaderExit) => void;
  const started = new Promise<LeaderStart>((resolve) => (resolveStarted = resolve));
  const exit = new Promise<LeaderExit>((resolve) => (resolveExit = resolve));
  let startError: string | null = null;
  let exitReported = false;
  const onLine = (line: string) => {
    const space = line.indexOf(' ');
    const [word, value] = [line.slice(0, space), line.slice(space + 1)];
    if (word === 'start') resolveStarted({ pid: Number(value), pgid: Number(value), startedAt: Date.now() });
    else if (word === 'error') startError = value;
    else if (word === 'exit' || word === 'signal') {
      exitReported = true;
      const number = Number(value);
      // A leader that failed before exec never ran: its exit is the failure, with no exit code.
      if (startError !== null) resolveExit({ exitCode: null, signal: null, error: `spawn failed: ${startError}`, endedAt: Date.now() });
      else if (word === 'exit') resolveExit({ exitCode: number, signal: null, error: null, endedAt: Date.now() });
      else resolveExit({ exitCode: 128 + number, signal: signalName(number), error: null, endedAt: Date.now() });
    }
  };
  readLines(streams.channel, onLine);
  // The channel closes when the shim exits (normally its whole subtree is gone by then), or when
  // the spawner could not start it (the spawner closes the shim's end).
  const gone = new Promise<void>((resolve) => streams.channel.once('close', () => resolve()));
  void Promise.all([gone, spawned]).then(([, answer]) => {
    if (exitReported) return;
    if ('error' in answer) {
      resolveExit({ exitCode: null, signal: null, error: `spawn failed: ${answer.error}`, endedAt: Date.now() });
      return;
    }
    // The shim died before its task (killed from outside, or its spawner died): end what it held.
    killOrphans(cgroupDir, runKey);
    resolveExit({ exitCode: null, signal: null, error: startError ?? 'the task ended without reporting its exit (its shim was killed)', endedAt: Date.now() });
  });
  return {
    stdout: streams.stdout,
    stderr: streams.stderr,
    stdin: streams.stdin,
    started,
    exit,
    gone: () => gone,
    signal(signal: KillSignal) {
      if (!streams.channel.destroyed) streams.channel.write(`kill ${osConstants.signals[signal]}\n`);
    },
    // The shim is the spawner's child and reaped there; what is left here is its cgroup.
    release: async () => (cgroupDir === null ? null : removeCgroup(cgroupDir)),
  };
}

/** Without its shim nothing reaps or signals the task: kill it by cgroup, else by its run marker. */
function killOrphans(cgroupDir: string | null, runKey: string | null): void {
  if (cgroupDir !== null) {
    killCgroup(cgroupDir);
    return;
  }
  if (runKey === null) return;
  const addon = nativeAddon();
  const marker = `${RUN_MARKER_NAME}=${runKey}`;
  for (const pid of listMarkedProcesses(marker)) {
    let pidfd: number;
    try {
      pidfd = addon.pidfdOpen(pid);
    } catch {
      continue; // gone meanwhile
    }
    // Checked after the pidfd is taken: if the pid was reused, the marker is not there.
    if (hasEnvironmentMarker(pid, marker)) addon.sendSignal(pidfd, osConstants.signals.SIGKILL);
    addon.close(pidfd);
  }
}

/** Writes cgroup.kill (every process in it gets SIGKILL at once); a cgroup already gone is no error. */
export function killCgroup(dir: string): void {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // gone already
  }
}

const RMDIR_ATTEMPTS = 50;
const RMDIR_RETRY_MS = 10;

/**
 * Reads the task's CPU time from its cgroup, then removes the cgroup (killing anything that is
 * somehow still in it). Right after the last process is reaped the kernel may still call it busy
 * for a moment, so removal is retried briefly.
 */
export async function removeCgroup(dir: string): Promise<number | null> {
  const cpuMs = readCpuMs(dir);
  killCgroup(dir);
  for (let attempt = 0; attempt < RMDIR_ATTEMPTS; attempt++) {
    try {
      rmdirSync(dir);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EBUSY') break; // gone already, or left for the next start
      await sleep(RMDIR_RETRY_MS);
    }
  }
  return cpuMs;
}

function failedLaunch(error: string, cgroupDir: string | null): LaunchedTask {
  if (cgroupDir !== null) void removeCgroup(cgroupDir);
  return {
    stdout: null,
    stderr: null,
    stdin: null,
    started: new Promise(() => {}),
    exit: Promise.resolve({ exitCode: null, signal: null, error, endedAt: Date.now() }),
    gone: () => Promise.resolve(),
    signal() {},
    release: async () => null,
  };
}
