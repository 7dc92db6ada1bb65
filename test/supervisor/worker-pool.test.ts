// The worker threads stop when nothing has needed them for a while, and start again when something does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poolThreads, WorkerPool } from '../../src/supervisor/tasks/worker-pool.js';
import { waitFor } from '../helpers/processes.js';

const IDLE_MS = 300;

test('the threads start with the pool, stop only once idle for the idle time, and start again when warmed', async (t) => {
  const pool = new WorkerPool(IDLE_MS);
  t.after(() => pool.close());
  const threads = poolThreads();
  assert.equal(pool.threads, threads, 'the threads at the start');
  // Warmed every turn of a 50 ms timer, the threads are never seen stopped unless the idle time
  // passed since the last warm (a slow machine's late timer may let it pass: then they stopped rightly).
  let warmedAt = performance.now();
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (pool.threads === 0) {
      const idle = performance.now() - warmedAt;
      assert.ok(idle >= IDLE_MS - 1, `the threads stopped ${idle.toFixed(0)} ms after the last warm`);
    }
    pool.warm();
    warmedAt = performance.now();
    assert.equal(pool.threads, threads, 'the threads after warm()');
  }
  assert.ok(await waitFor(() => pool.threads === 0, 10_000), `still ${pool.threads} threads after the idle time`);
  assert.ok(performance.now() - warmedAt >= IDLE_MS - 1, 'not before the idle time');
  pool.warm();
  assert.equal(pool.threads, threads, 'the threads after warm()');
});

test('the pool leaves a core to the main thread and takes one thread for each other core, one to four', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 8, 64].map((cores) => poolThreads(cores)),
    [1, 1, 2, 3, 4, 4, 4],
  );
});
