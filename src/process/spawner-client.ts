// The client of this worker thread's hive-task-spawner: a small process that starts the task shims, so the
// cost of a spawn does not grow with the daemon's memory. Started on first use, again if it died.
// It dies with this thread, and the tasks with it: the thread's end kills and reaps it (the
// addon's reapAtThreadEnd; PR_SET_PDEATHSIG too, should the addon's cleanup not run), so an idle
// thread that stops leaves no zombie behind.
//
// A request is sent at once (it is small, and carries the child's fds); the answer comes back on a
// socket of its own that this thread's event loop reads, so the thread goes on with its other
// tasks while the spawner forks and execs.
import { closeSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { endianness } from 'node:os';
import { describeErrno } from '../errors.js';
import { nativeAddon, SHIM_PATH, SPAWNER_PATH, type NativeError } from './native.js';
import { signalNumber } from '../shared/signals.js';
import { weighSpawner, type TaskCpuWeight } from './cpu-weight.js';

/** The spawner's answer: the child's pid, or why it could not be started (with the errno of the start, when it failed). */
export type SpawnAnswer = { pid: number } | { error: string; errno: number | null };

interface SpawnerProcess {
  /** Requests go here (blocking writes from the addon). */
  requests: number;
  /** Answers come here, in the order of the requests. */
  answers: Socket;
  pid: number;
  pidfd: number;
  waiting: Array<(answer: SpawnAnswer) => void>;
  /** The pidfd of the tasks' init whose namespaces it joined, or null. */
  namespaceFd: number | null;
}

type SpawnOptions = { path: string; argv: string[]; env: string[]; cwd: string; fds: number[] };

/** Errors that mean the spawner is gone (it is started again once). */
const SPAWNER_GONE = new Set(['EPIPE', 'ECONNRESET', 'ENOTCONN', 'EBADF']);
/**
 * A spawn is a fork and an exec; a spawner this late to answer is stuck (a cwd on a hung mount,
 * say), and new spawns go to a new one. The stuck one is kept, with what it started: its shims
 * die with it. Its late answers still reach their tasks.
 */
const ANSWER_TIMEOUT_MS = 30_000;
/** Errors the addon raises before sending anything: the spawner's stream is still in step. */
const NOT_SENT = new Set(['EINVAL', 'ENOMEM']);
const HEADER_BYTES = 4;

let current: SpawnerProcess | null = null;

/** The spawner's fd for the init's pidfd it joins (its argv says which). */
const SPAWNER_INIT_FD = 5;

/**
 * Starts a spawner with the tasks' CPU weight; with `namespaceFd` (a pidfd of the tasks' init) it
 * joins that init's namespaces.
 */
function startSpawner(namespaceFd: number | null, cpuWeight: TaskCpuWeight): SpawnerProcess {
  const addon = nativeAddon();
  const [requests, theirRequests] = addon.socketPair();
  const [answerFd, theirAnswers] = addon.socketPair();
  const devNull = openSync('/dev/null', 'r+');
  let started: { pid: number; pidfd: number };
  try {
    // Spawned directly: this happens once per worker thread, while the daemon is still small.
    // With SHIM_PATH on its command line it starts shims by forking itself rather than exec'ing them.
    const fds = [devNull, devNull, 2, theirRequests, theirAnswers];
    const argv = [SPAWNER_PATH, SHIM_PATH];
    if (namespaceFd !== null) {
      fds.push(namespaceFd);
      argv.push(String(SPAWNER_INIT_FD));
    }
    started = addon.spawn({ path: SPAWNER_PATH, argv, env: [], cwd: '/', fds });
  } catch (error) {
    addon.close(requests);
    addon.close(answerFd);
    throw error;
  } finally {
    addon.close(theirRequests);
    addon.close(theirAnswers);
    closeSync(devNull);
  }
  addon.reapAtThreadEnd(started.pidfd, true);
  // Before its first request, so that every shim it forks inherits the weight.
  weighSpawner(started.pid, cpuWeight);
  const spawner: SpawnerProcess = {
    requests,
    answers: new Socket({ fd: answerFd, readable: true, writable: false }),
    ...started,
    waiting: [],
    namespaceFd,
  };
  readAnswers(spawner);
  return spawner;
}

/** Frames: a 32-bit length in this machine's byte order, then "ERRNO PID". */
function readAnswers(spawner: SpawnerProcess): void {
  let buffered: Buffer = Buffer.alloc(0);
  spawner.answers.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      if (buffered.length < HEADER_BYTES) return;
      const length = endianness() === 'LE' ? buffered.readUInt32LE(0) : buffered.readUInt32BE(0);
      if (buffered.length < HEADER_BYTES + length) return;
      const [code, pid] = buffered
        .subarray(HEADER_BYTES, HEADER_BYTES + length)
        .toString('latin1')
        .split(' ')
        .map(Number);
      buffered = buffered.subarray(HEADER_BYTES + length);
      const errno = -(code ?? 0);
      const answer: SpawnAnswer = code === 0 && pid! > 0 ? { pid: pid! } : { error: describeErrno(errno), errno };
      spawner.waiting.shift()?.(answer);
    }
  });
  spawner.answers.on('error', () => {}); // 'close' follows
  spawner.answers.on('close', () => forgetSpawner(spawner, 'the spawner exited before answering'));
}

/** Lets a spawner that exited go (reaped here). Waiting spawns fail with `why`. */
function forgetSpawner(spawner: SpawnerProcess, why: string): void {
  if (current === spawner) current = null;
  if (spawner.requests === -1) return;
  const addon = nativeAddon();
  addon.close(spawner.requests);
  spawner.requests = -1;
  spawner.answers.destroy();
  for (const settle of spawner.waiting.splice(0)) settle({ error: why, errno: null });
  addon.sendSignal(spawner.pidfd, signalNumber('SIGKILL')); // gone already, or about to be
  addon.reapAtThreadEnd(spawner.pidfd, false);
  addon.reap(spawner.pidfd, 1);
  addon.close(spawner.pidfd);
}

/**
 * Asks the spawner to spawn, as the addon's spawn does, and returns the answer to come. The
 * request (and the fds in it) is sent before this returns, so the caller may close its copies at
 * once. `build` gets the spawner's pid: the child's parent, which a shim checks it still has once
 * it runs. `namespaceFd`: the pidfd of the tasks' init whose namespaces the child is to start in
 * (a spawner in others is retired), or null. `cpuWeight`: the tasks' weight, which a new spawner
 * takes. Throws only when no spawner can take the request.
 */
export function spawnThroughSpawner(
  build: (spawnerPid: number) => SpawnOptions,
  namespaceFd: number | null,
  cpuWeight: TaskCpuWeight,
): Promise<SpawnAnswer> {
  for (let attempt = 0; ; attempt++) {
    if (current !== null && current.namespaceFd !== namespaceFd) retireSpawner(current);
    const spawner = (current ??= startSpawner(namespaceFd, cpuWeight));
    try {
      nativeAddon().spawnRequest(spawner.requests, build(spawner.pid));
    } catch (error) {
      const code = (error as NativeError).code;
      if (SPAWNER_GONE.has(code)) {
        forgetSpawner(spawner, 'the spawner died');
        if (attempt === 0) continue;
      } else if (!NOT_SENT.has(code)) {
        // Part of a request may have gone: this spawner's stream is out of step for good.
        retireSpawner(spawner);
      }
      throw error;
    }
    return new Promise<SpawnAnswer>((resolve) => {
      const timer = setTimeout(() => retireSpawner(spawner), ANSWER_TIMEOUT_MS).unref();
      spawner.waiting.push((answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
    });
  }
}

/** New spawns go to a new spawner; this one keeps its shims (they die with it) and its answers. */
function retireSpawner(spawner: SpawnerProcess): void {
  if (current === spawner) current = null;
}
