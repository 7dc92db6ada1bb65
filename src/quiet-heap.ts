// A thread's heap given back while the daemon is quiet: the main thread's, and each worker
// thread's (it hosts its tasks' runs). V8 shrinks a new space at a collection that finds the
// allocation rate low, and gives free pages back in one meant to reduce memory; a quiet daemon
// allocates too little to cause either (none came in a minute, measured): one that started 100
// `sleep`s and then heard nothing kept the 16 MB of new space and the garbage its starts had left
// (106 MB of RSS where 88 to 90 MB do, measured). So every QUIET_CHECK_MS a thread looks at what it
// allocated since the last look (the native addon counts it at every collection); from QUIET_CHECKS
// quiet looks in a row on, it tells V8 its memory is under moderate pressure (the addon again), and
// V8 marks in small steps and collects. Twice a quiet spell, a look apart: the first collection
// frees the new space and leaves the old space's pages sparse, the second moves what lives on them
// together and gives them back (4.5 MB of old space, measured). A busy look starts a new spell. A
// busy thread never pays it; one that wakes finds a new space of 1 MB, which grows back in its first
// scavenges.
// What V8 does not hold, the C library may: glibc keeps what a thread frees in that thread's malloc
// arena, resident, and returns to the kernel only a large free run at an arena's top. A daemon that
// had run 1,000 tasks held 82.9 MB on Node 20 and 111.9 MB on Node 24 a minute after its worker
// thread stopped, where a fresh one holds 68 and 83 (measured). So every quiet look from the
// second in a row on also trims the arenas (malloc_trim), as does the worker pool once its threads
// have stopped: 77.3 and 88.3 MB then. A trim takes about 0.1 ms when there is nothing to give
// back, 11 ms for 22 MB.
import { loadNative } from './process/native.js';

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
let releases = 0;
/** How many of this process's trims of the C library's arenas gave memory back, for /metrics. */
export const mallocReleases = (): number => releases;

/** Trims the C library's arenas now (also when the worker threads have stopped). */
export function trimFreedMemory(): void {
  const native = loadNative();
  if (!('error' in native) && native.addon.trimMalloc()) releases++;
}

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
    } else if (++quietLooks >= QUIET_CHECKS) {
      trimFreedMemory(); // first what the last look's collection left free
      if (reducedThisSpell < QUIET_REDUCTIONS) {
        reducedThisSpell++;
        reductions++;
        native.addon.reduceHeap();
      }
    }
    onCheck?.(quiet);
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}
