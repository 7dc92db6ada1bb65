// Long reads of /proc done a slice at a time, with the event loop turning between slices: a task
// can hold tens of thousands of processes or sockets, and reading them all in one go held the main
// thread for seconds (15,000 processes: /healthz 2 to 3 s). Such scans run one after another: side
// by side, each would run a slice in the same turn, and hold the loop as long as all of them.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { OneAtATime } from '../one-at-a-time.js';

/** Steps of work (an fd link read, a line parsed) between two turns of the event loop: each slice takes a few ms. */
const SLICE = 256;

/**
 * The steps one process's /proc files cost (its stat, its threads' children): about 70 us of this
 * thread against 10 for an fd link, on this loaded machine. At 1 step a process, a slice of a
 * task's 15,000 took 18 ms on average and up to 104.
 */
export const PROCESS_STEPS = 4;

/**
 * Long scans of this thread, one after another. A scan that fits in one slice (a task with a few
 * processes or descriptors, the usual case) never waits for them.
 */
const longScans = new OneAtATime();

/**
 * Counts a scan's steps of work: every SLICE of them, the event loop is due a turn. The scan's
 * first turn waits for any other long scan to end; `end` lets the next one go.
 */
export class Slices {
  private done = 0;
  private leave: (() => void) | null = null;

  /** Counts `steps` more steps done (a process read costs several: see PROCESS_STEPS); true when a turn is due. */
  due(steps = 1): boolean {
    const before = Math.floor(this.done / SLICE);
    this.done += steps;
    return Math.floor(this.done / SLICE) > before;
  }

  async pause(): Promise<void> {
    this.leave ??= await longScans.enter();
    await nextTurn();
  }

  end(): void {
    this.leave?.();
  }
}

/** Runs `work` with slices of its own; once it is done, the next long scan may go. */
export async function inSlices<T>(work: (slices: Slices) => Promise<T>): Promise<T> {
  const slices = new Slices();
  try {
    return await work(slices);
  } finally {
    slices.end();
  }
}
