// Ends a task: a first signal to every process of it, then SIGKILL to whatever outlives the grace period.
import { setTimeout as sleep } from 'node:timers/promises';
import type { KillSignal } from '../shared/signals.js';

export interface TerminationTarget {
  signal(signal: KillSignal): void;
  /** Resolves once nothing of the task is left alive. */
  gone(): Promise<void>;
}

export interface TerminationHandle {
  /** Resolves once the task is gone or has been sent SIGKILL. */
  done: Promise<void>;
  /** Skips the rest of the grace period. */
  forceNow(): void;
}

/** Signals `target` and escalates to SIGKILL once `graceMs` has passed with anything still alive. */
export function terminate(target: TerminationTarget, firstSignal: KillSignal, graceMs: number): TerminationHandle {
  let force!: () => void;
  const forced = new Promise<void>((resolve) => (force = resolve));
  const grace = new AbortController();
  const done = (async () => {
    target.signal(firstSignal);
    if (firstSignal === 'SIGKILL') return;
    const outcome = await Promise.race([
      target.gone().then(() => 'gone' as const),
      forced.then(() => 'forced' as const),
      sleep(graceMs, 'grace' as const, { signal: grace.signal }).catch(() => 'gone' as const),
    ]);
    grace.abort();
    // A non-interactive bash starts `&` jobs with SIGINT and SIGQUIT ignored: they end only here.
    if (outcome !== 'gone') target.signal('SIGKILL');
  })();
  return { done, forceNow: () => force() };
}
