// Starts a task through the native addon: the thread's spawner starts the per-task shim (no
// fork() of the daemon), which leads the task's session, reaps its subtree, starts the leader in
// the task's cgroup and reports on fd 4. Given the output files, the shim gets them as its fds 1
// and 2 and writes the task's output into them itself; else the output comes back here on pipes. Its fd 3 (control) and fd 4 (status) are the same end of
// one socket pair, so a task holds one fd and one socket here for both; fd 5 holds the command
// (the leader's COMMAND_FD); in the tasks' own PID namespace, fd 6 is the host's /proc, where the
// shim finds the leader's pid as the daemon sees it; then a sandboxed task's terminal's devpts
// mount (-D), and the command policy (-p), each where it is given.
import { closeSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { SpawnError } from '../errors.js';
import { TASK_SHELL_ARGV, type LaunchedTask, type LaunchRequest } from './launched-task.js';
import { nativeAddon, SHIM_NAME, SHIM_PATH } from './native.js';
import { RUN_MARKER_NAME } from './process-table.js';
import { policyFd } from './exec-policy.js';
import { sandboxShimArgs } from './sandbox.js';
import { spawnThroughSpawner, type SpawnAnswer } from './spawner-client.js';
import { createTaskCgroups, joinedDirs } from './task-cgroups.js';
import { failedLaunch, trackShim } from './shim-task.js';

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
  const devptsFd = 'devptsFd' in stdio ? stdio.devptsFd : null;
  const output = 'output' in stdio ? stdio.output : undefined;
  let devNull = -1;
  let policy: number | null = null;
  let ends: number[];
  try {
    // [child stdin, our end, our stdout end, child stdout, our stderr end, child stderr]; -1: none.
    if (terminalFd !== -1) ends = [terminalFd, -1, -1, terminalFd, -1, terminalFd];
    else {
      devNull = 'stdin' in stdio && stdio.stdin === 'null' ? openSync('/dev/null', 'r') : -1;
      ends = [
        ...(devNull === -1 ? pipe() : [devNull, -1]),
        ...(output ? [-1, output.fds[0], -1, output.fds[1]] : [...pipe(), ...pipe()]),
      ];
    }
    const channel = addon.socketPair();
    owned.push(...channel);
    ends.push(...channel);
    const command = addon.textFd(request.command);
    owned.push(command);
    ends.push(command);
    if (request.namespaceFd !== null) hostProc ??= openSync('/proc', 'r');
    policy = request.policy === null ? null : policyFd(request.policy);
  } catch (error) {
    // Out of fds, typically: give back what was taken and fail this task alone.
    for (const fd of owned) addon.close(fd);
    if (devNull !== -1) closeSync(devNull);
    return failedLaunch(SpawnError.fromSystemError(error), request.cgroups);
  }
  const [
    childStdin,
    stdinWrite,
    stdoutRead,
    stdoutWrite,
    stderrRead,
    stderrWrite,
    channelOurs,
    channelTheirs,
    command,
  ] = ends as number[] & { length: 9 };
  // The shim reads control lines on fd 3 and writes status lines on fd 4: both are its end of the channel.
  const childEnds = [
    childStdin!,
    stdoutWrite!,
    stderrWrite!,
    channelTheirs!,
    channelTheirs!,
    command!,
    ...(request.namespaceFd === null ? [] : [hostProc!]),
    ...(devptsFd === null ? [] : [devptsFd]),
    ...(policy === null ? [] : [policy]),
  ];
  const shimOptions = [
    '-s',
    '5',
    ...(request.namespaceFd === null ? [] : ['-P', '6']),
    ...(devptsFd === null ? [] : ['-D', String(childEnds.indexOf(devptsFd))]),
    ...(policy === null ? [] : ['-p', String(childEnds.indexOf(policy))]),
    ...(terminalFd === -1 ? [] : ['-t']),
    ...(output ? ['-o', String(output.maxBytes)] : []),
    ...sandboxShimArgs(request.sandbox),
  ];
  let spawned: Promise<SpawnAnswer> | null = null;
  let failure: SpawnError | null = null;
  try {
    createTaskCgroups(request.cgroups);
    spawned = spawnThroughSpawner(
      (spawnerPid) => ({
        path: SHIM_PATH,
        argv: [
          SHIM_NAME,
          ...shimOptions,
          ...joinedDirs(request.cgroups).flatMap((dir) => ['-j', dir]),
          String(spawnerPid),
          request.cgroups.v2?.dir ?? '-',
          ...TASK_SHELL_ARGV,
        ],
        env: Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
        cwd: request.cwd,
        fds: childEnds,
      }),
      request.namespaceFd,
      request.cpuWeight,
    );
  } catch (error) {
    failure = SpawnError.fromSystemError(error);
  }
  // The request carries the child's fds: ours can go now. The terminal's fd and the output files
  // are the caller's to close. fs.openSync'd fds must go back through fs.closeSync: a worker thread
  // tracks them, and warns when a number it thinks is still open comes back from another open.
  const callers = new Set([terminalFd, devptsFd, hostProc, policy, ...(output?.fds ?? [])]);
  for (const fd of new Set(childEnds))
    if (callers.has(fd)) continue;
    else if (fd === devNull) closeSync(fd);
    else addon.close(fd);
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
  return trackShim(
    { stdout, stderr, channel, channelFd: channelOurs!, stdin },
    spawned,
    { runKey: runKey ?? '', cgroupDir: request.cgroups.v2?.dir ?? null },
    request,
  );
}
