// Room kept for the registry's last writes: a file of RESERVE_BYTES in the state dir, made at start
// (where the disk has room), and given up at a stop when the disk refuses the writes held in
// memory, so that the tasks' ends known then are written and not lost to the next start (which
// would mark those tasks interrupted). A full disk that still refuses them is logged at error,
// naming each task whose end is lost.
import { closeSync, existsSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { describeFreeBytes } from '../../errors.js';
import type { TaskStore } from './task-store.js';

/** Enough for a few hundred tasks' ends and todos in SQLite's pages and write-ahead log. */
const RESERVE_BYTES = 512 * 1024;
const RESERVE_FILE = 'registry-reserve';

/** Makes the reserve file in `stateDir` where it is missing; none (and no partial one) where the disk has no room. */
export function keepDiskReserve(stateDir: string): void {
  const path = join(stateDir, RESERVE_FILE);
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch {
    return; // there already, or the state dir cannot be written
  }
  try {
    const zeros = Buffer.alloc(64 * 1024);
    for (let written = 0; written < RESERVE_BYTES;) written += writeSync(fd, zeros);
  } catch {
    rmSync(path, { force: true });
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes the state dir's lock (`lock`), giving up the reserve file first where the disk is too full
 * for it (ENOSPC, EDQUOT: a daemon killed on a full disk would not start again): the start then
 * writes its records, and its registry marks the tasks it finds interrupted, in the room it frees.
 */
export function lockWithRoom<T>(stateDir: string, lock: () => T, log: Logger): T {
  try {
    return lock();
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    const path = join(stateDir, RESERVE_FILE);
    if ((code !== 'ENOSPC' && code !== 'EDQUOT') || !existsSync(path)) throw error;
    rmSync(path, { force: true });
    log.warn(
      { state_dir: stateDir, free: describeFreeBytes(stateDir) },
      `the state dir was full at the start: ${path} was given up to start; free space there`,
    );
    return lock();
  }
}

/** At a stop: writes what the registry holds in memory, giving up the reserve if the disk refuses it; logs what it could not. */
export function commitAtStop(store: TaskStore, stateDir: string, log: Logger): void {
  if (store.commit()) return;
  const path = join(stateDir, RESERVE_FILE);
  rmSync(path, { force: true });
  const fault = store.storageFault;
  if (store.commit()) {
    log.warn(
      { state_dir: stateDir, fault },
      `the state dir was full at the stop: ${path} was given up to write the held registry writes`,
    );
    return;
  }
  log.error(
    { state_dir: stateDir, fault, free: describeFreeBytes(stateDir), tasks: store.heldTaskIds() },
    'the state dir refused the held registry writes at the stop: the ends of these tasks are lost, and the next start marks them interrupted; free space there before stopping the daemon',
  );
}
