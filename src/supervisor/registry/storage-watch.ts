// The registry's writes while the state dir's disk refuses them: a fault is logged once, the held
// writes are tried again every second until the disk takes them, and the recovery is logged.
import type { Logger } from 'pino';
import { describeFreeBytes } from '../../errors.js';
import type { TaskStore } from './task-store.js';

/** How often held registry writes are tried again while the state dir's disk refuses them. */
const STORAGE_RETRY_MS = 1000;

/** Logs a storage fault once, retries the held writes until the disk takes them, and logs the recovery. */
export function watchStorage(store: TaskStore, stateDir: string, log: Logger): NodeJS.Timeout {
  let reported: string | null = null;
  return setInterval(() => {
    const fault = store.storageFault;
    if (fault === null) return;
    if (reported === null)
      log.error(
        { state_dir: stateDir, fault, free: describeFreeBytes(stateDir) },
        'the state dir cannot be written: registry writes are held in memory and run is refused until it can',
      );
    reported = fault;
    if (store.commit()) {
      log.info({ state_dir: stateDir }, 'the state dir takes writes again: the held registry writes are written');
      reported = null;
    }
  }, STORAGE_RETRY_MS).unref();
}
