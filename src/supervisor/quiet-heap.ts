// The main thread's heap given back while the daemon is quiet. V8 shrinks its new space at a
// collection that finds the allocation rate low, and gives free pages back in one meant to reduce
// memory; a quiet daemon allocates too little to cause either (none came in a minute, measured): one
// that started 100 `sleep`s and then heard nothing kept the 16 MB of new space and the garbage its
// starts had left (106 MB of RSS where 88 to 90 MB do, measured). So every QUIET_CHECK_MS the daemon looks at what its main thread
// allocated since the last look; from QUIET_CHECKS quiet looks in a row on, it tells V8 its memory
// is under moderate pressure (the native addon), and V8 marks in small steps and collects. Twice a
// quiet spell, a look apart: the first collection frees the new space and leaves the old space's
// pages sparse, the second moves what lives on them together and gives them back (4.5 MB of old
// space, measured). A busy look starts a new spell. A busy daemon never pays it; one that wakes
// finds a new space of 1 MB, which grows back in its first scavenges.
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { loadNative } from '../process/native.js';
import { newSpace } from './young-generation.js';

/** How often the daemon looks. */
export const QUIET_CHECK_MS = 5_000;
/** Quiet looks in a row before the heap is reduced: ten seconds of quiet. */
export const QUIET_CHECKS = 2;
/** Reductions in one quiet spell, at consecutive looks. */
export const QUIET_REDUCTIONS = 2;
/** V8's own bound of a low allocation rate (below it, a collection shrinks the new space): 1,000 bytes a millisecond. */
const QUIET_BYTES_PER_MS = 1_000;

let reductions = 0;
/** How many times this process has reduced its heap, for /metrics. */
export const heapReductions = (): number => reductions;

export interface QuietHeapOptions {
  checkMs?: number;
  quietChecks?: number;
  /** Told after every look (and the reduction it made), whether it was quiet: for the tests. */
  onCheck?: (quiet: boolean) => void;
}

/**
 * Starts the looks. Not where the native addon cannot load (the daemon then runs without it).
 * Returns a function that stops them.
 */
export function reduceHeapWhenQuiet(options: QuietHeapOptions = {}): () => void {
  const native = loadNative();
  if ('error' in native) return () => {};
  const { checkMs = QUIET_CHECK_MS, quietChecks = QUIET_CHECKS, onCheck } = options;
  let scavenges = 0;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
  });
  observer.observe({ entryTypes: ['gc'] });
  let lastUsed = newSpace().used;
  let quietLooks = 0;
  let reducedThisSpell = 0;
  const timer = setInterval(() => {
    const { used, capacity } = newSpace();
    // Allocated since the last look, at least: what the new space gained, and a semi-space filled
    // for every scavenge between.
    const allocated = Math.max(0, used - lastUsed) + (scavenges * capacity) / 2;
    lastUsed = used;
    scavenges = 0;
    const quiet = allocated < QUIET_BYTES_PER_MS * checkMs;
    if (!quiet) {
      quietLooks = 0;
      reducedThisSpell = 0;
    } else if (++quietLooks >= quietChecks && reducedThisSpell < QUIET_REDUCTIONS) {
      reducedThisSpell++;
      reductions++;
      native.addon.reduceHeap();
    }
    onCheck?.(quiet);
  }, checkMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    observer.disconnect();
  };
}
