// Starts a task through the native addon: the thread's spawner starts the per-task shim (no
// fork() of the daemon), which leads the task's session, reaps its subtree, starts the leader in
// the task's cgroup and reports on fd 4. Given the output files, the shim gets them as its fds 1
// and 2 and writes the task's output into them itself; else the output comes back here on pipes.
// Its fd 3 (control) and fd 4 (status) are the same end of one socket pair, so a task holds one fd and one socket here for both; fd 5 holds the command
// (the leader's COMMAND_FD); in the tasks' own PID namespace, fd 6 is the host's /proc, where the
// shim finds the leader's pid as the daemon sees it; then a sandboxed task's terminal's devpts
// mount (-D), and the command policy (-p), each where it is given; in the namespace, last, its
// cgroup folders, which it names /proc/self/fd/N.
import { closeSync, constants, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { SpawnError } from '../errors.js';
import { TASK_SHELL_ARGV, type LaunchedTask, type LaunchRequest } from './launched-task.js';
import { nativeAddon, SHIM_NAME, SHIM_PATH } from './native.js';
import { RUN_MARKER_NAME } from './process-table.js';
import { policyFd } from './exec-policy.js';
import { sandboxShimArgs } from './sandbox.js';
import { spawnThroughSpawner, type SpawnAnswer } from './spawner-client.js';
import { createTaskCgroups, joinedDirs } from './task-cgroups.js';
import { failedLaunch, trackShim, type ShimStreams } from './shim-task.js';

/** This thread's fd of the host's /proc, opened once (the shims in the tasks' namespace get it). */
let hostProc: number | null = null;

/** The shim's fd of the command text (its -s option), which it gives the leader as its fd 3. */
const SHIM_COMMAND_FD = 5;

/** The descriptors of one shim's start, by name; -1 where the task has none. */
interface ShimFds {
  /** What the shim gets as its fds 0, 1 and 2. */
  shimStdin: number;
  shimStdout: number;
  shimStderr: number;
  /** Our ends of the stdio pipes; -1 where that stream is no pipe (a terminal, /dev/null, an output file). */
  stdinWrite: number;
  stdoutRead: number;
  stderrRead: number;
  /** The socket pair for control lines (to the shim) and status lines (from it): our end and the shim's. */
  channel: number;
  shimChannel: number;
  /** The command text. */
  command: number;
  /** The command policy's text, or null; this thread's to keep (exec-policy.ts). */
  policy: number | null;
  /** /dev/null for a task without stdin, opened through fs (so closed through fs); -1 if none. */
  devNull: number;
  /** The shim's ends that the addon opened here, closed once the spawner has them. */
  lent: number[];
}

/** The shim's fds (its 0 to 5, then those its options name) and those options. */
interface ShimStart {
  fds: number[];
  options: string[];
}

/** Spawns the shim for `request`; a spawn failure comes back as the exit, never as a throw. */
export function launchNative(request: LaunchRequest): LaunchedTask {
  let fds: ShimFds;
  try {
    fds = openShimFds(request);
  } catch (error) {
    // Out of fds, typically: fail this task alone.
    return failedLaunch(SpawnError.fromSystemError(error), request.cgroups);
  }
  const spawned = spawnShim(request, shimStart(fds, request));
  // The spawn request carries the shim's ends: ours can go now.
  closeLent(fds);
  if (spawned instanceof SpawnError) {
    closeOurs(fds);
    return failedLaunch(spawned, request.cgroups);
  }
  const runKey = request.env[RUN_MARKER_NAME] ?? '';
  return trackShim(shimStreams(fds), spawned, { runKey, cgroupDir: request.cgroups.v2?.dir ?? null }, request);
}

/** Opens what the shim is started with; on a failure closes what it opened, and throws. */
function openShimFds(request: LaunchRequest): ShimFds {
  const addon = nativeAddon();
  const lent: number[] = [];
  const opened: number[] = [];
  /** A pipe whose read end (`shimReads`) or write end goes to the shim: [shim's end, ours]. */
  const pipe = (shimReads: boolean): [number, number] => {
    const [read, write] = addon.pipe();
    opened.push(read, write);
    lent.push(shimReads ? read : write);
    return shimReads ? [read, write] : [write, read];
  };
  let devNull = -1;
  try {
    const { stdio } = request;
    let stdin: [number, number], stdout: [number, number], stderr: [number, number];
    if ('terminalFd' in stdio) stdin = stdout = stderr = [stdio.terminalFd, -1];
    else {
      if (stdio.stdin === 'null') devNull = openSync('/dev/null', 'r');
      stdin = devNull === -1 ? pipe(true) : [devNull, -1];
      stdout = stdio.output ? [stdio.output.fds[0], -1] : pipe(false);
      stderr = stdio.output ? [stdio.output.fds[1], -1] : pipe(false);
    }
    const [channel, shimChannel] = addon.socketPair();
    opened.push(channel, shimChannel);
    const command = addon.textFd(request.command);
    opened.push(command);
    lent.push(shimChannel, command);
    if (request.namespaceFd !== null) hostProc ??= openSync('/proc', 'r');
    const policy = request.policy === null ? null : policyFd(request.policy);
    const [shimStdin, stdinWrite] = stdin;
    const [[shimStdout, stdoutRead], [shimStderr, stderrRead]] = [stdout, stderr];
    return {
      shimStdin,
      shimStdout,
      shimStderr,
      stdinWrite,
      stdoutRead,
      stderrRead,
      channel,
      shimChannel,
      command,
      policy,
      devNull,
      lent,
    };
  } catch (error) {
    for (const fd of opened) addon.close(fd);
    if (devNull !== -1) closeSync(devNull);
    throw error;
  }
}

/**
 * The shim's fds and options: fds 0 to 2 its stdio; 3 (control lines in) and 4 (status lines out)
 * both its end of the channel; 5 the command; then, each where it is given and named by its option,
 * the host's /proc (-P), a sandboxed terminal's devpts mount (-D) and the command policy (-p).
 */
function shimStart(fds: ShimFds, request: LaunchRequest): ShimStart {
  const { stdio } = request;
  const start: ShimStart = {
    fds: [fds.shimStdin, fds.shimStdout, fds.shimStderr, fds.shimChannel, fds.shimChannel, fds.command],
    options: ['-s', String(SHIM_COMMAND_FD)],
  };
  const pass = (option: string, fd: number | null) => {
    if (fd === null) return;
    start.options.push(option, String(start.fds.length));
    start.fds.push(fd);
  };
  pass('-P', request.namespaceFd === null ? null : hostProc);
  pass('-D', 'devptsFd' in stdio ? stdio.devptsFd : null);
  pass('-p', fds.policy);
  if ('terminalFd' in stdio) start.options.push('-t');
  if ('output' in stdio && stdio.output) start.options.push('-o', String(stdio.output.maxBytes));
  start.options.push(...sandboxShimArgs(request.sandbox, request.sandboxWithoutNamespaces));
  return start;
}

/** Creates the task's cgroups and asks this thread's spawner for the shim: its answer to come, or the failure. */
function spawnShim(request: LaunchRequest, start: ShimStart): Promise<SpawnAnswer> | SpawnError {
  const folders: number[] = [];
  try {
    createTaskCgroups(request.cgroups);
    const fds = [...start.fds];
    // In the tasks' namespace every cgroup mount is read-only (task-mounts.c): the shim gets its
    // task's folders opened here, where they are writable, and names them /proc/self/fd/N.
    const reach = (dir: string): string => {
      if (request.namespaceFd === null) return dir;
      const folder = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
      folders.push(folder);
      fds.push(folder);
      return `/proc/self/fd/${fds.length - 1}`;
    };
    const joined = joinedDirs(request.cgroups).flatMap((dir) => ['-j', reach(dir)]);
    const v2 = request.cgroups.v2 === null ? '-' : reach(request.cgroups.v2.dir);
    return spawnThroughSpawner(
      (spawnerPid) => ({
        path: SHIM_PATH,
        argv: [SHIM_NAME, ...start.options, ...joined, String(spawnerPid), v2, ...TASK_SHELL_ARGV],
        env: Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
        cwd: request.cwd,
        fds,
      }),
      request.namespaceFd,
      request.cpuWeight,
    );
  } catch (error) {
    return SpawnError.fromSystemError(error);
  } finally {
    // The request, and its fds, went before spawnThroughSpawner returned.
    for (const fd of folders) closeSync(fd);
  }
}

/**
 * Closes the shim's ends opened here. The terminal's fds, the output files, the host's /proc and
 * the policy are the caller's or this thread's. fs.openSync'd fds go back through fs.closeSync: a
 * worker thread tracks them, and warns when a number it thinks is still open comes back from another open.
 */
function closeLent(fds: ShimFds): void {
  for (const fd of fds.lent) nativeAddon().close(fd);
  if (fds.devNull !== -1) closeSync(fds.devNull);
}

/** Closes our ends, when the shim never started. */
function closeOurs(fds: ShimFds): void {
  for (const fd of [fds.stdinWrite, fds.stdoutRead, fds.stderrRead, fds.channel])
    if (fd !== -1) nativeAddon().close(fd);
}

/** Our ends as streams. */
function shimStreams(fds: ShimFds): ShimStreams {
  const readEnd = (fd: number) => (fd === -1 ? null : new Socket({ fd, readable: true, writable: false }));
  const channel = new Socket({ fd: fds.channel, readable: true, writable: true });
  const stdin = fds.stdinWrite === -1 ? null : new Socket({ fd: fds.stdinWrite, readable: false, writable: true });
  channel.on('error', () => {}); // a write after the shim exited; its end is seen as 'close'
  stdin?.on('error', () => {});
  return { stdout: readEnd(fds.stdoutRead), stderr: readEnd(fds.stderrRead), channel, channelFd: fds.channel, stdin };
}
