// The worker threads stop when nothing has needed them for a while, and start again when something does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { poolThreads, WorkerPool } from '../../src/supervisor/tasks/worker-pool.js';
import { waitFor } from '../helpers/processes.js';

test('the threads start with the pool, stop once idle for the idle time, and start again when warmed', async (t) => {
  const pool = new WorkerPool(300);
  t.after(() => pool.close());
  const threads = poolThreads();
  assert.equal(pool.threads, threads, 'the threads at the start');
  // Warmed again and again within the idle time, the threads stay past it.
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(pool.threads, threads, `the threads ${(i + 1) * 200} ms in, though warmed every 200 ms`);
    pool.warm();
  }
  assert.ok(await waitFor(() => pool.threads === 0, 10_000), `still ${pool.threads} threads after the idle time`);
  pool.warm();
  assert.equal(pool.threads, threads, 'the threads after warm()');
});

test('the pool leaves a core to the main thread and takes one thread for each other core, one to four', () => {
  assert.deepEqual(
    [1, 2, 3, 4, 5, 8, 64].map((cores) => poolThreads(cores)),
    [1, 1, 2, 3, 4, 4, 4],
  );
});
