// Preloaded into a daemon (node --import) to inflate its memory for the spawn benchmark: holds
// HIVE_BENCH_BALLAST_MB of touched pages, so a fork() has that many page tables to copy.
import { isMainThread } from 'node:worker_threads';

// Worker threads run the preload too: only the main thread holds the ballast.
const megabytes = isMainThread ? Number(process.env.HIVE_BENCH_BALLAST_MB ?? '0') : 0;
const ballast: Buffer[] = [];
for (let i = 0; i < megabytes; i += 64)
  ballast.push(Buffer.allocUnsafe(Math.min(64, megabytes - i) * 1024 * 1024).fill(1));
(globalThis as { hiveBenchBallast?: Buffer[] }).hiveBenchBallast = ballast;
