// Ends a task's process group: a first signal, then SIGKILL to whatever outlives the grace period.
import { setTimeout as sleep } from 'node:timers/promises';
import { listGroupMembers } from './process-table.js';
import type { KillSignal } from './protocol.js';

const GROUP_POLL_MS = 20;

/** Sends `signal` to every process in group `pgid`; false when the group no longer exists. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** True while any process of group `pgid` is alive (zombies do not count). */
export function groupIsAlive(pgid: number): boolean {
  return listGroupMembers(pgid).length > 0;
}

/**
 * Signals group `pgid` and escalates to SIGKILL once `graceMs` has passed with anything still alive.
 * `forceNow()` on the returned handle skips the rest of the grace period.
 */
export function terminateGroup(pgid: number, firstSignal: KillSignal, graceMs: number): TerminationHandle {
  let forced = firstSignal === 'SIGKILL';
  let wake: (() => void) | null = null;
  const done = (async () => {
    signalGroup(pgid, firstSignal);
    const deadline = Date.now() + graceMs;
    while (!forced && Date.now() < deadline) {
      if (!groupIsAlive(pgid)) return;
      await Promise.race([sleep(GROUP_POLL_MS), new Promise<void>((resolve) => (wake = resolve))]);
    }
    // A non-interactive bash starts `&` jobs with SIGINT and SIGQUIT ignored: they end only here.
    if (groupIsAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  })();
  return {
    done,
    forceNow() {
      forced = true;
      wake?.();
    },
  };
}

export interface TerminationHandle {
  /** Resolves once the group is gone or has been sent SIGKILL. */
  done: Promise<void>;
  forceNow(): void;
}
