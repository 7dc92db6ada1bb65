// The main thread's heap is given back after a quiet spell: in a real Node process with the native
// addon, a churn that grew the new space keeps the looks busy and nothing is reduced; once it stops,
// the heap is reduced at the second and third quiet looks in a row, V8 shrinks the new space to its
// least, and more quiet looks reduce nothing more until a busy one starts a new spell. The process
// runs without V8's own memory reducer, which after the churn's full collections shrinks the new
// space by itself some seconds into the quiet (in the daemon at rest none came in a minute).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { QUIET_CHECKS, QUIET_REDUCTIONS } from '../../src/quiet-heap.js';

const QUIET_HEAP_URL = new URL('../../src/quiet-heap.js', import.meta.url).href;
const YOUNG_GENERATION_URL = new URL('../../src/supervisor/young-generation.js', import.meta.url).href;
const MB = 1024 * 1024;

/**
 * Looks every 100 ms (the second quiet one in a row reduces), quiet under 5,000 bytes a millisecond
 * (the daemon's bound, 1,000 over 5 s, is far above what it allocates at rest; over 100 ms this
 * process's own looks come near it), churns for 10 looks (a turn of the churn allocates about a
 * megabyte, and at least one comes between two looks), stays quiet until a spell's reductions and
 * V8's marking after them have shrunk the new space (or 400 looks), quiet
 * for 10 looks more, then churns for 4 and stays quiet until the next spell's (or 100 looks). Prints
 * what each phase saw: each look as [quiet, reductions so far].
 */
const CHILD = `
const { reduceHeapWhenQuiet, heapReductions, QUIET_REDUCTIONS: SPELL } = await import(${JSON.stringify(QUIET_HEAP_URL)});
const { newSpaceCapacity } = await import(${JSON.stringify(YOUNG_GENERATION_URL)});
// The looks' timer does not keep a process alive; this one does.
const alive = setInterval(() => {}, 60_000);
let looks = [];
let onLook = () => {};
reduceHeapWhenQuiet({ checkMs: 100, quietBytesPerMs: 5000, onCheck: (quiet) => { looks.push([quiet, heapReductions()]); onLook(); } });
const look = () => new Promise((resolve) => (onLook = resolve));
const live = [];
async function churn(count) {
  const until = looks.length + count;
  while (looks.length < until) {
    for (let i = 0; i < 20000; i++) {
      live.push({ i, text: 'x' + i });
      if (live.length > 60000) live.length = 0;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  live.length = 0;
}
async function quietUntil(done, most) {
  for (let count = 0; count < most && !done(); count++) await look();
}
const phase = () => {
  const seen = { looks, reductions: heapReductions(), capacity: newSpaceCapacity() / ${MB} };
  looks = [];
  return seen;
};
await churn(10);
const busy = phase();
await quietUntil(() => heapReductions() === SPELL && newSpaceCapacity() <= 2 * ${MB}, 400);
const quiet = phase();
await quietUntil(() => false, 10);
const stillQuiet = phase();
await churn(4);
await quietUntil(() => heapReductions() === 2 * SPELL, 100);
process.stdout.write(JSON.stringify({ busy, quiet, stillQuiet, again: phase() }));
clearInterval(alive);
`;

interface Phase {
  looks: [quiet: boolean, reductions: number][];
  reductions: number;
  capacity: number;
}

/**
 * The looks of `phase` around the one that brought the count to `first`: it and the one before must
 * be quiet (the second quiet look in a row), the next quiet and at `first + 1`.
 */
function assertSpell(phase: Phase, first: number, what: string): void {
  const at = phase.looks.findIndex(([, reductions]) => reductions === first);
  const around = phase.looks.slice(Math.max(0, at - 1), at + 2);
  assert.ok(at >= 1, `${what}: no reduction came: ${JSON.stringify(phase.looks)}`);
  assert.deepEqual(
    around,
    [
      [true, first - 1],
      [true, first],
      [true, first + 1],
    ],
    `${what}: reduced at the second and third quiet looks in a row: ${JSON.stringify(phase.looks)}`,
  );
}

test('a quiet spell reduces the heap at its second and third looks; a busy look starts a new spell', async () => {
  assert.deepEqual([QUIET_CHECKS, QUIET_REDUCTIONS], [2, 2], 'what the looks below are counted against');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--no-memory-reducer', '--input-type=module', '-e', CHILD],
    {
      timeout: 120_000,
    },
  );
  const { busy, quiet, stillQuiet, again } = JSON.parse(stdout) as Record<string, Phase>;
  assert.ok(
    busy!.looks.length >= 10 && busy!.looks.every(([each]) => !each),
    `a churning process is busy: ${JSON.stringify(busy!.looks)}`,
  );
  assert.equal(busy!.reductions, 0);
  assert.ok(busy!.capacity >= 4, `the churn grew the new space (${busy!.capacity} MB)`);
  assertSpell(quiet!, 1, 'the first quiet spell');
  assert.ok(quiet!.capacity <= 2, `reduced, the new space stayed at ${quiet!.capacity} MB`);
  assert.deepEqual(
    [stillQuiet!.looks.length, stillQuiet!.reductions],
    [10, 2],
    `twice a quiet spell: ${JSON.stringify(stillQuiet!.looks)}`,
  );
  assert.ok(
    again!.looks.slice(0, 4).every(([each]) => !each),
    `the second churn is busy: ${JSON.stringify(again!.looks)}`,
  );
  assertSpell(again!, 3, 'after a busy spell');
});

/**
 * 20,000 native buffers of 1,000 bytes (malloc'd by Node), every thousandth kept so the free memory
 * lies between live blocks where glibc does not return it by itself; the rest dropped and
 * collected. Prints the RSS then, and after the looks (every 100 ms, all quiet: the trims start at
 * the second) until a trim has given back half of it (V8 may free the buffers on a thread of its
 * own after the collection, so a first trim may find only some of them), or 50 looks.
 */
const FREED_CHILD = `
const { readFileSync } = await import('node:fs');
const { reduceHeapWhenQuiet, mallocReleases } = await import(${JSON.stringify(QUIET_HEAP_URL)});
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const kept = [];
let buffers = [];
for (let i = 0; i < 20000; i++) {
  buffers.push(Buffer.allocUnsafeSlow(1000));
  if (i % 1000 === 999) kept.push(buffers[i]);
}
buffers = null;
globalThis.gc();
globalThis.gc();
const freed = rss();
// The looks' timer does not keep a process alive; this one does, until they are done.
const alive = setInterval(() => {}, 60_000);
let looks = 0;
await new Promise((resolve) => {
  const stop = reduceHeapWhenQuiet({ checkMs: 100, quietBytesPerMs: 1e9, onCheck: () => {
    if ((mallocReleases() === 0 || freed - rss() < ${10 * MB}) && ++looks < 50) return;
    stop();
    resolve();
  } });
});
clearInterval(alive);
process.stdout.write(JSON.stringify({ freed, trimmed: rss(), releases: mallocReleases(), kept: kept.length }));
`;

test("a quiet look gives the C library's free memory back to the kernel", async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', '--input-type=module', '-e', FREED_CHILD],
    { timeout: 120_000 },
  );
  const { freed, trimmed, releases, kept } = JSON.parse(stdout) as Record<string, number>;
  assert.equal(kept, 20);
  assert.ok(releases! >= 1, `a trim gave memory back (${releases} did)`);
  assert.ok(
    freed! - trimmed! >= 10 * MB,
    `about 20 MB of freed buffers went back: RSS ${(freed! / MB).toFixed(1)} MB, then ${(trimmed! / MB).toFixed(1)} MB`,
  );
});
