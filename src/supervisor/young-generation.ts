// The main thread's young generation, held at a size of the daemon's choosing. V8 grows an
// isolate's new space (doubling it) whenever more has survived its scavenges since the last growth
// than it holds, up to a cap fixed when the isolate starts: 32 MB on Node 20's V8, 128 MB on Node
// 24's, where a busy daemon's RSS then rose by about 120 MB over its first thousands of tasks and
// never came down (V8 keeps the pages). Node takes that cap only on its command line, where it
// would also override the worker threads' own, smaller limit (their resourceLimits). The factor V8
// grows by, though, is read at every growth: once the new space has reached the target, the daemon
// sets it to 1 (no growth), and back to 2 should V8 shrink the space below the target (as it does
// when the daemon is idle). It does so after every collection, not only on a change, and as soon as
// any worker thread is online: Node 20's V8 raises the factor back to 2 whenever an isolate starts
// (a thread of the pool). A collection of the main thread that falls between that start and the
// thread's `online` event, and is due to grow the new space, still grows it once.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { PerformanceObserver } from 'node:perf_hooks';
import type { Worker } from 'node:worker_threads';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/**
 * The main thread's new space at most (both semi-spaces; Node 20's own cap is 32 MB). Measured
 * (bench/README.md, issue 25's seventh sitting): against 32 MB, 16 MB took 1,000 running tasks from
 * 139.5 to 125.5 MB of RSS, and its scavenges, twice as many, cost the main thread about 0.05 ms more
 * a task; 8 MB saved 7 MB more for 0.09 ms.
 */
export const YOUNG_GENERATION_TARGET_BYTES = 16 * 1024 * 1024;

const DEFAULT_GROWTH_FACTOR = 2;
/** Node's diagnostics channel of worker threads' creation. */
const WORKER_CHANNEL = 'worker_threads';

/**
 * The new space's capacity, both semi-spaces: twice what one holds (used and available). Not its
 * size: after a full collection V8 may give back the idle semi-space's pages, halving the size
 * while the capacity, which the next growth doubles, stays.
 */
export function newSpaceCapacity(): number {
  const space = getHeapSpaceStatistics().find((each) => each.space_name === 'new_space');
  return space === undefined ? 0 : 2 * (space.space_used_size + space.space_available_size);
}

const setGrowthFactor = (factor: number) => setFlagsFromString(`--semi-space-growth-factor=${factor}`);

/**
 * After every garbage collection of this process, lets the new space grow only while it is below
 * `targetBytes`. Not applied where Node's command line sets a semi-space size or the growth factor:
 * the operator's wins. Returns a function that stops it and restores V8's default.
 */
export function holdYoungGeneration(
  targetBytes = YOUNG_GENERATION_TARGET_BYTES,
  execArgv = process.execArgv,
): () => void {
  if (execArgv.some((arg) => arg.startsWith('--max-semi-space-size') || arg.startsWith('--semi-space-growth-factor'))) {
    return () => {};
  }
  // Capacities are powers of two; what one holds is a little less (its pages' headers): one is at
  // the target if past three quarters of it.
  const hold = () => setGrowthFactor(newSpaceCapacity() >= 0.75 * targetBytes ? 1 : DEFAULT_GROWTH_FACTOR);
  // Entries come in a task after the collection, long before the next growth could be due (that
  // takes more survivors than the whole new space holds).
  const observer = new PerformanceObserver(hold);
  observer.observe({ entryTypes: ['gc'] });
  // Published by every `new Worker` in this process; its isolate is up by its `online` event.
  const onWorker = (message: unknown) => (message as { worker: Worker }).worker.once('online', hold);
  subscribe(WORKER_CHANNEL, onWorker);
  hold();
  return () => {
    observer.disconnect();
    unsubscribe(WORKER_CHANNEL, onWorker);
    setGrowthFactor(DEFAULT_GROWTH_FACTOR);
  };
}
