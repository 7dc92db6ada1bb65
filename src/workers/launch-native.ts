// Starts a task through the native addon: the thread's spawner posix_spawns the per-task shim (no
// fork() of the daemon), which leads the task's session, reaps its subtree, starts the leader in
// the task's cgroup and reports on fd 4.
import { closeSync, mkdirSync, openSync, rmdirSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants as osConstants } from 'node:os';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LaunchedTask, LaunchRequest, LeaderExit } from './launched-task.js';
import { nativeAddon, SHIM_PATH, type NativeError } from './native.js';
import { spawnThroughSpawner } from './spawner.js';
import { readTaskResources } from './task-resources.js';
import type { KillSignal } from './protocol.js';

const signalName = (number: number): string | null =>
  (Object.entries(osConstants.signals).find(([, value]) => value === number)?.[0] as string | undefined) ?? null;

/** Spawns the shim for `request`; a spawn failure comes back as the exit, never as a throw. */
export function launchNative(request: LaunchRequest): LaunchedTask {
  const addon = nativeAddon();
  const pipe = () => addon.pipe();
  const [stdinRead, stdinWrite] = request.stdin === null ? [openSync('/dev/null', 'r'), -1] : pipe();
  const [stdoutRead, stdoutWrite] = pipe();
  const [stderrRead, stderrWrite] = pipe();
  const [controlRead, controlWrite] = pipe();
  const [statusRead, statusWrite] = pipe();
  const childEnds = [stdinRead, stdoutWrite, stderrWrite, controlRead, statusWrite];
  let spawned: { pid: number } | null = null;
  let failure: string | null = null;
  try {
    if (request.cgroupDir !== null) mkdirSync(request.cgroupDir);
    const pid = spawnThroughSpawner({
      path: SHIM_PATH,
      argv: [SHIM_PATH, request.cgroupDir ?? '-', ...request.argv],
      env: Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
      cwd: request.cwd,
      fds: childEnds,
    });
    spawned = { pid };
  } catch (error) {
    failure = `spawn failed: ${(error as NativeError).code ?? ''} ${(error as Error).message}`.trim();
  }
  // fs.openSync'd fds must go back through fs.closeSync: a worker thread tracks them, and warns
  // when a number it thinks is still open comes back from another open.
  for (const fd of childEnds) (fd === stdinRead && request.stdin === null ? closeSync : addon.close)(fd);
  const [stdout, stderr, status] = [stdoutRead, stderrRead, statusRead].map((fd) => new Socket({ fd, readable: true, writable: false }));
  const control = new Socket({ fd: controlWrite, readable: false, writable: true });
  const stdin = stdinWrite === -1 ? null : new Socket({ fd: stdinWrite, readable: false, writable: true });
  control.on('error', () => {});
  stdin?.on('error', () => {});
  if (!spawned) {
    for (const socket of [status, control, stdin]) socket?.destroy();
    return failedLaunch(stdout!, stderr!, failure ?? 'spawn failed', request.cgroupDir);
  }
  return trackShim(spawned, { stdout: stdout!, stderr: stderr!, status: status!, control, stdin }, request.cgroupDir);
}

interface ShimStreams {
  stdout: Socket;
  stderr: Socket;
  status: Socket;
  control: Socket;
  stdin: Socket | null;
}

function trackShim(shim: { pid: number }, streams: ShimStreams, cgroupDir: string | null): LaunchedTask {
  let resolveStarted!: (value: { pid: number; pgid: number }) => void;
  let resolveExit!: (value: LeaderExit) => void;
  const started = new Promise<{ pid: number; pgid: number }>((resolve) => (resolveStarted = resolve));
  const exit = new Promise<LeaderExit>((resolve) => (resolveExit = resolve));
  let shimError: string | null = null;
  createInterface({ input: streams.status }).on('line', (line) => {
    const [word, value = ''] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
    if (word === 'start') resolveStarted({ pid: Number(value), pgid: shim.pid });
    else if (word === 'exit') resolveExit({ exitCode: Number(value), signal: null, error: null, endedAt: Date.now() });
    else if (word === 'signal') {
      const number = Number(value);
      resolveExit({ exitCode: 128 + number, signal: signalName(number), error: null, endedAt: Date.now() });
    } else if (word === 'error') shimError = value;
  });
  // The status pipe closes when the shim exits: its whole subtree is gone by then.
  const gone = new Promise<void>((resolve) => streams.status.once('close', () => resolve()));
  void gone.then(() => {
    resolveExit({ exitCode: null, signal: null, error: shimError ?? 'the task ended without reporting its exit (its shim was killed)', endedAt: Date.now() });
    streams.control.destroy();
  });
  return {
    stdout: streams.stdout,
    stderr: streams.stderr,
    stdin: streams.stdin,
    started,
    exit,
    gone: () => gone,
    signal(signal: KillSignal) {
      if (!streams.control.destroyed) streams.control.write(`kill ${osConstants.signals[signal]}\n`);
    },
    // The shim is the spawner's child and reaped there; what is left here is its cgroup.
    release: async () => (cgroupDir === null ? null : removeCgroup(cgroupDir)),
  };
}

const RMDIR_ATTEMPTS = 50;
const RMDIR_RETRY_MS = 10;

/**
 * Reads the task's CPU time from its cgroup, then removes the cgroup. Right after the last process
 * is reaped the kernel may still call it busy for a moment, so removal is retried briefly.
 */
async function removeCgroup(dir: string): Promise<number | null> {
  const { cpuMs } = readTaskResources(dir);
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

function failedLaunch(stdout: Socket, stderr: Socket, error: string, cgroupDir: string | null): LaunchedTask {
  stdout.destroy();
  stderr.destroy();
  if (cgroupDir !== null) void removeCgroup(cgroupDir);
  return {
    stdout,
    stderr,
    stdin: null,
    started: new Promise(() => {}),
    exit: Promise.resolve({ exitCode: null, signal: null, error, endedAt: Date.now() }),
    gone: () => Promise.resolve(),
    signal() {},
    release: async () => null,
  };
}
