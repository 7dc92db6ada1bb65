// The registry's writes while the state dir's disk refuses them: a fault is logged once, the held
// writes are tried again every second until the disk takes them, and the recovery is logged. The
// state dir's own files are looked at as often: one removed or replaced is logged once.
import type { Logger } from 'pino';
import { describeFreeBytes } from '../../errors.js';
import type { StateDirCheck } from './state-dir-check.js';
import type { TaskStore } from './task-store.js';

/** How often held registry writes are tried again while the state dir's disk refuses them. */
const STORAGE_RETRY_MS = 1000;

/** Logs a storage fault once, retries the held writes until the disk takes them, and logs the recovery; logs a state dir whose files changed hands. */
export function watchStorage(
  { store, check }: { store: TaskStore; check: StateDirCheck },
  stateDir: string,
  log: Logger,
): NodeJS.Timeout {
  let reported: string | null = null;
  let problemSaid: string | null = null;
  return setInterval(() => {
    const problem = check.problem();
    if (problem !== null && problem !== problemSaid) log.error({ state_dir: stateDir, problem }, problem);
    problemSaid = problem;
    if (problem !== null) check.remakeOutputDir(); // a no-op unless it is the folder that is gone
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
