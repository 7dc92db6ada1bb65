// How many runs each fuzz property makes and from which seed: small by default (CI);
// HIVE_FUZZ_RUNS=N runs every property N times; HIVE_FUZZ_SEED=S replays the seed every run prints
// first; HIVE_FUZZ_NO_SHRINK=1 stops at the first failure.
import { randomInt } from 'node:crypto';
import type fc from 'fast-check';

const FULL_RUNS = Number(process.env.HIVE_FUZZ_RUNS ?? '') || 0;
/** Every run has a seed, printed first, so that any failure replays with HIVE_FUZZ_SEED. */
const SEED = process.env.HIVE_FUZZ_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.HIVE_FUZZ_SEED);
console.log(`fuzz seed ${SEED} (HIVE_FUZZ_SEED=${SEED} replays this run)`);

/** fast-check's parameters for a property that runs `defaultRuns` times at CI size. */
export const params = (defaultRuns: number): fc.Parameters<any> => ({
  numRuns: FULL_RUNS > 0 ? FULL_RUNS : defaultRuns,
  includeErrorInReport: true,
  // Shrinking replays against the live daemon; HIVE_FUZZ_NO_SHRINK=1 reports the first failure as found.
  // CI-size runs report a failure at once (with its seed) instead of shrinking it against the live
  // daemon past the test's timeout.
  ...(process.env.HIVE_FUZZ_NO_SHRINK || FULL_RUNS === 0 ? { endOnFailure: true } : {}),
  seed: SEED,
});
/** Per-property test timeout: generous for full runs, tight for CI. */
export const TEST_TIMEOUT_MS = FULL_RUNS > 0 ? 24 * 3600_000 : 120_000;
/** The daemon the properties run against: one task running at a time, five waiting. */
export const DAEMON_ARGS = ['--max-running', '1', '--max-pending', '5'];
