// The main thread's heap given back while the daemon is quiet. V8 shrinks its new space at a
// collection that finds the allocation rate low, and gives free pages back in one meant to reduce
// memory; a quiet daemon allocates too little to cause either (none came in a minute, measured): one
// that started 100 `sleep`s and then heard nothing kept the 16 MB of new space and the garbage its
// starts had left (106 MB of RSS where 88 to 90 MB do, measured). So every QUIET_CHECK_MS the daemon
// looks at what its main thread allocated since the last look (the native addon counts it at every
// collection); from QUIET_CHECKS quiet looks in a row on, it tells V8 its memory is under moderate
// pressure (the addon again), and V8 marks in small steps and collects. Twice a quiet spell, a look
// apart: the first collection frees the new space and leaves the old space's pages sparse, the
// second moves what lives on them together and gives them back (4.5 MB of old space, measured). A
// busy look starts a new spell. A busy daemon never pays it; one that wakes finds a new space of
// 1 MB, which grows back in its first scavenges.
import { loadNative } from '../process/native.js';

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
  /** The allocation rate under which a look is quiet. */
  quietBytesPerMs?: number;
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
  const { checkMs = QUIET_CHECK_MS, quietBytesPerMs = QUIET_BYTES_PER_MS, onCheck } = options;
  let last = native.addon.allocatedBytes();
  let quietLooks = 0;
  let reducedThisSpell = 0;
  const timer = setInterval(() => {
    const now = native.addon.allocatedBytes();
    const allocated = now - last;
    last = now;
    const quiet = allocated < quietBytesPerMs * checkMs;
    if (!quiet) {
      quietLooks = 0;
      reducedThisSpell = 0;
    } else if (++quietLooks >= QUIET_CHECKS && reducedThisSpell < QUIET_REDUCTIONS) {
      reducedThisSpell++;
      reductions++;
      native.addon.reduceHeap();
    }
    onCheck?.(quiet);
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}
