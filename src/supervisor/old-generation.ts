// How far V8 lets an isolate's old generation grow past what its last full collection left live
// before it starts the next one. V8 picks that factor from its collector's speed against the
// program's, up to 4 on a machine of this size. Under a steady load of short tasks the daemon's main
// thread promotes a few KB of each task's objects (its record, its calls' promises) that die soon
// after, so its old generation filled with garbage up to that limit before a collection came: on
// Node 24, from 14 to 52 MB over 5,600 tasks, 22 MB of heap used after the collection, and the RSS
// with it from 141 to 172 MB. Grown by half at most, the RSS over 20,000 tasks stayed at 144 to 147
// MB on Node 24 and 117 to 118 MB on Node 20, for 0.03 to 0.07 ms more of collector pauses a task
// (bench/README.md, issue 25's tenth sitting). The flag is the process's, so the worker threads'
// isolates take it too; V8 reads it at every collection, so setting it at start is enough.
import { setFlagsFromString } from 'node:v8';

/** The old generation's growth between full collections, in percent of what was live after the last. */
export const OLD_GENERATION_GROWTH_PERCENT = 50;

/**
 * Holds V8's heap growing factor to 1 + `percent`/100. Not applied where Node's command line sets
 * it: the operator's wins. Returns whether it was applied.
 */
export function limitOldGenerationGrowth(
  percent = OLD_GENERATION_GROWTH_PERCENT,
  execArgv = process.execArgv,
): boolean {
  if (execArgv.some((arg) => /^--heap[-_]growing[-_]percent/.test(arg))) return false;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return true;
}
