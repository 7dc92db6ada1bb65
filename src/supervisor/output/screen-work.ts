// How much screen work each task has had lately, so that a flood of costly output gets an answer
// in bounded time: a task has SCREEN_WORK_MS_PER_MINUTE of drawing, refilled at that rate (a leaky
// bucket). While it has a call's worth left, a screen that cannot be drawn within one call is
// refused and the next call draws on from there; past it, a call draws only a recent part of the
// output (screen-feed.ts), and says how much was skipped.
import { performance } from 'node:perf_hooks';
import { BoundedCache } from '../bounded-cache.js';

/** Drawing a task may take in a minute: three calls' worth. */
export const SCREEN_WORK_MS_PER_MINUTE = 6000;
const MINUTE_MS = 60_000;
/** Tasks whose work is remembered: those drawn most recently. */
const KEPT_TASKS = 1024;

interface Spent {
  ms: number;
  at: number;
}

export class ScreenWork {
  private readonly spent = new BoundedCache<string, Spent>(KEPT_TASKS);

  /** Whether task `id` has `ms` of drawing left now. */
  hasLeft(id: string, ms: number): boolean {
    return this.spentNow(id) + ms <= SCREEN_WORK_MS_PER_MINUTE;
  }

  /** Task `id` drew for `ms`. */
  spend(id: string, ms: number): void {
    this.spent.set(id, { ms: this.spentNow(id) + ms, at: performance.now() });
  }

  /** What task `id` has spent, less what the time since has refilled. */
  private spentNow(id: string): number {
    const spent = this.spent.get(id);
    if (spent === undefined) return 0;
    const refilled = ((performance.now() - spent.at) * SCREEN_WORK_MS_PER_MINUTE) / MINUTE_MS;
    return Math.max(0, spent.ms - refilled);
  }
}
