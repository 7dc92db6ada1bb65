// This worker thread's hive-task-spawner: a small process that posix_spawns the task shims, so the
// cost of a spawn does not grow with the daemon's memory. Started on first use, again if it died.
// It dies with this thread (PR_SET_PDEATHSIG), and the tasks with it: piscina keeps its threads
// for the daemon's whole life here (a fixed pool with no idle timeout).
import { openSync, closeSync } from 'node:fs';
import { nativeAddon, SPAWNER_PATH, type NativeError } from './native.js';

interface SpawnerProcess {
  socket: number;
  pid: number;
  pidfd: number;
}

type SpawnOptions = { path: string; argv: string[]; env: string[]; cwd: string; fds: number[] };

/** Errors that mean the spawner is gone (it is started again once). */
const SPAWNER_GONE = new Set(['EPIPE', 'ECONNRESET', 'ENOTCONN', 'EBADF']);

let current: SpawnerProcess | null = null;

function startSpawner(): SpawnerProcess {
  const addon = nativeAddon();
  const [socket, theirs] = addon.socketPair();
  const devNull = openSync('/dev/null', 'r+');
  try {
    // Spawned directly: this happens once per worker thread, while the daemon is still small.
    const { pid, pidfd } = addon.spawn({ path: SPAWNER_PATH, argv: [SPAWNER_PATH], env: [], cwd: '/', fds: [devNull, devNull, 2, theirs] });
    return { socket, pid, pidfd };
  } catch (error) {
    addon.close(socket);
    throw error;
  } finally {
    addon.close(theirs);
    closeSync(devNull);
  }
}

function forgetSpawner(spawner: SpawnerProcess): void {
  const addon = nativeAddon();
  addon.close(spawner.socket); // a live spawner exits at EOF on its socket
  addon.reap(spawner.pidfd, 1);
  addon.close(spawner.pidfd);
  if (current === spawner) current = null;
}

/**
 * Spawns through the spawner, as the addon's spawn does, and returns the child's pid. `build` gets
 * the spawner's pid: the child's parent, which a shim checks it still has once it runs.
 */
export function spawnThroughSpawner(build: (spawnerPid: number) => SpawnOptions): number {
  for (let attempt = 0; ; attempt++) {
    current ??= startSpawner();
    try {
      return nativeAddon().spawnVia(current.socket, build(current.pid));
    } catch (error) {
      if (!SPAWNER_GONE.has((error as NativeError).code) || attempt > 0) throw error;
      forgetSpawner(current);
    }
  }
}
