// The turns of pattern jobs: each client's jobs in order, the client served longest ago first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PatternTurns } from '../../src/supervisor/output/pattern-turns.js';

/** Queues `jobs` ([client, name] in the order they come) and names them in the order they are served. */
function serve(turns: PatternTurns, jobs: Array<[string, string]>, seq = 0): string[] {
  const order: string[] = [];
  for (const [client, name] of jobs) turns.wait(client, { seq: seq++, start: () => order.push(name) });
  for (let job = turns.next(); job !== null; job = turns.next()) job.start();
  return order;
}

test('a client with many jobs waiting takes turns with one that comes later', () => {
  const turns = new PatternTurns();
  const order = serve(turns, [
    ['a', 'a1'],
    ['a', 'a2'],
    ['a', 'a3'],
    ['b', 'b1'],
    ['c', 'c1'],
    ['b', 'b2'],
  ]);
  assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
  assert.equal(turns.oldestSeq(), Infinity);
});

test('a client whose job runs goes after one that has not been served; one gone idle comes back as new', () => {
  const turns = new PatternTurns();
  assert.deepEqual(serve(turns, [['a', 'a1']]), ['a1']);
  // a1 still runs: a's next job waits behind b's.
  assert.deepEqual(
    serve(
      turns,
      [
        ['a', 'a2'],
        ['b', 'b1'],
      ],
      1,
    ),
    ['b1', 'a2'],
  );
  assert.equal(turns.oldestSeq(), Infinity);
  for (const client of ['a', 'a', 'b']) turns.ended(client);
  // All ended: both are forgotten, so the one that comes first goes first.
  assert.deepEqual(
    serve(
      turns,
      [
        ['b', 'b2'],
        ['a', 'a3'],
      ],
      3,
    ),
    ['b2', 'a3'],
  );
});
