// The main thread's young generation is held at the daemon's target: in a real Node process that
// keeps objects alive across its scavenges (what makes V8 grow the new space), the new space
// settles at the target while held, a worker thread's start notwithstanding (Node 20's V8 resets the
// growth factor then), and grows past it once released; a semi-space size on Node's command line is
// left to V8.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const MODULE_URL = new URL('../../src/supervisor/young-generation.js', import.meta.url).href;
const MB = 1024 * 1024;
const TARGET_MB = 4;

/**
 * Churns in two phases, the first held at TARGET_MB (with `execArgv` given to the hold), a worker
 * thread started in its middle as the pool starts its threads, the second released; prints each
 * phase's settled new space in MB: its smallest capacity (newSpaceCapacity, as the hold reads it) over
 * the phase's last hundred turns (on Node 24 it counts, for a while, pages V8 adds during a full
 * collection's marking). The capacity, not the size, which halves when V8 gives back the idle
 * semi-space's pages.
 */
const CHILD = `
import { Worker } from 'node:worker_threads';
const { holdYoungGeneration, newSpaceCapacity } = await import(${JSON.stringify(MODULE_URL)});
const live = [];
async function churn(turns) {
  const capacities = [];
  for (let turn = 0; turn < turns; turn++) {
    for (let i = 0; i < 5000; i++) {
      live.push({ i, text: 'x' + i });
      if (live.length > 30000) live.length = 0;
    }
    capacities.push(newSpaceCapacity());
    await new Promise((resolve) => setImmediate(resolve));
  }
  return Math.min(...capacities.slice(-100)) / ${MB};
}
const release = holdYoungGeneration(${TARGET_MB * MB}, JSON.parse(process.argv[1]));
await churn(300);
// No collection between the worker's isolate start and its online event (the one window the hold
// leaves, stated in its module): a full one now, and nothing allocated until it is online.
globalThis.gc();
const worker = new Worker('setInterval(() => {}, 1000)', { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
await new Promise((resolve) => worker.once('online', resolve));
const held = await churn(700);
await worker.terminate();
release();
const released = await churn(1000);
process.stdout.write(JSON.stringify({ held, released }));
`;

async function churnPhases(execArgv: string[]): Promise<{ held: number; released: number }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--input-type=module', '-e', CHILD, JSON.stringify(execArgv)],
    { timeout: 120_000 },
  );
  return JSON.parse(stdout) as { held: number; released: number };
}

test('held, the new space stays at the target under survivors that grow it; released, it grows past', async () => {
  const { held, released } = await churnPhases([]);
  assert.ok(held <= TARGET_MB, `held at ${TARGET_MB} MB, the new space settled at ${held} MB`);
  assert.ok(released >= 4 * TARGET_MB, `released, the new space stayed at ${released} MB: the churn does not grow it`);
});

test("a semi-space size on Node's command line is the operator's: the hold does nothing", async () => {
  const { held } = await churnPhases(['--max-semi-space-size=16']);
  assert.ok(held >= 4 * TARGET_MB, `not held, the new space settled at ${held} MB: it was held anyway`);
});
