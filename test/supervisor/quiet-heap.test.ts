// The main thread's heap is given back after a quiet spell: in a real Node process with the native
// addon, a churn that grew the new space keeps the looks busy and nothing is reduced; once it stops,
// the heap is reduced at the second and third quiet looks in a row, V8 shrinks the new space to its
// least, and more quiet looks reduce nothing more until a busy one starts a new spell.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { QUIET_REDUCTIONS } from '../../src/supervisor/quiet-heap.js';

const QUIET_HEAP_URL = new URL('../../src/supervisor/quiet-heap.js', import.meta.url).href;
const YOUNG_GENERATION_URL = new URL('../../src/supervisor/young-generation.js', import.meta.url).href;
const MB = 1024 * 1024;

/**
 * Looks every 50 ms (the second quiet one in a row reduces), churns for 10 looks, stays quiet until
 * a spell's reductions and V8's marking after them have shrunk the new space (or 400 looks), quiet
 * for 10 looks more, then churns for 4 and stays quiet until the next spell's (or 100 looks). Prints
 * what each phase saw: each look as [quiet, reductions so far].
 */
const CHILD = `
const { reduceHeapWhenQuiet, heapReductions, QUIET_REDUCTIONS: SPELL } = await import(${JSON.stringify(QUIET_HEAP_URL)});
const { newSpace } = await import(${JSON.stringify(YOUNG_GENERATION_URL)});
// The looks' timer does not keep a process alive; this one does.
const alive = setInterval(() => {}, 60_000);
let looks = [];
let onLook = () => {};
reduceHeapWhenQuiet({ checkMs: 50, quietChecks: 2, onCheck: (quiet) => { looks.push([quiet, heapReductions()]); onLook(); } });
const look = () => new Promise((resolve) => (onLook = resolve));
const live = [];
async function churn(count) {
  const until = looks.length + count;
  while (looks.length < until) {
    for (let i = 0; i < 5000; i++) {
      live.push({ i, text: 'x' + i });
      if (live.length > 30000) live.length = 0;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  live.length = 0;
}
async function quietUntil(done, most) {
  for (let count = 0; count < most && !done(); count++) await look();
}
const phase = () => {
  const seen = { looks, reductions: heapReductions(), capacity: newSpace().capacity / ${MB} };
  looks = [];
  return seen;
};
await churn(10);
const busy = phase();
await quietUntil(() => heapReductions() === SPELL && newSpace().capacity <= 2 * ${MB}, 400);
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

/** The reductions counted at each quiet look after the phase's first, from the first quiet one on. */
const fromFirstQuiet = (phase: Phase) => phase.looks.slice(phase.looks.findIndex(([quiet]) => quiet));

test('a quiet spell reduces the heap at its second and third looks; a busy look starts a new spell', async () => {
  assert.equal(QUIET_REDUCTIONS, 2);
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD], {
    timeout: 120_000,
  });
  const { busy, quiet, stillQuiet, again } = JSON.parse(stdout) as Record<string, Phase>;
  assert.ok(busy!.looks.length >= 10 && busy!.looks.every(([each]) => !each), 'a churning process is busy');
  assert.equal(busy!.reductions, 0);
  assert.ok(busy!.capacity >= 4, `the churn grew the new space (${busy!.capacity} MB)`);
  const spell = fromFirstQuiet(quiet!);
  assert.ok(
    spell.every(([each]) => each),
    `quiet once the churn stopped: ${JSON.stringify(quiet!.looks)}`,
  );
  assert.deepEqual(
    spell.slice(0, 3).map(([, reductions]) => reductions),
    [0, 1, 2],
    'reduced at the second and third quiet looks',
  );
  assert.ok(quiet!.capacity <= 2, `reduced, the new space stayed at ${quiet!.capacity} MB`);
  assert.deepEqual([stillQuiet!.looks.length, stillQuiet!.reductions], [10, 2], 'twice a quiet spell');
  const next = fromFirstQuiet(again!);
  assert.ok(
    again!.looks.slice(0, 4).every(([each]) => !each),
    'the second churn is busy',
  );
  assert.deepEqual(
    next.slice(0, 3).map(([, reductions]) => reductions),
    [2, 3, 4],
    `after a busy spell, quiet looks ${JSON.stringify(again!.looks)}`,
  );
});
