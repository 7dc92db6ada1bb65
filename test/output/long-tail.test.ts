// A tail of many lines of a long output costs a few times what a tail of few does, not a hundred:
// the latest lines are dropped from the front of what is held without moving the rest
// (Array.shift() moved them all: 100,000 lines of a 61 MB output took 79 s, 1,000 took 0.67 s).
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const LINES = 800_000;
const TAKEN = 100_000;
const FEW = 1_000;

test(`a tail of ${TAKEN} lines of ${LINES} costs about what a tail of ${FEW} does`, async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const run = await tools.ok('run', {
    command: `seq -f '%075g' 1 ${LINES}`,
    name: 'long',
    wait_seconds: 30,
  });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  const timed = async (args: Record<string, unknown>) => {
    const started = performance.now();
    const answer = await tools.ok('output', { id: 'long', max_bytes: 1024 * 1024, ...args });
    return { answer, ms: performance.now() - started };
  };
  const few = await timed({ tail: FEW });
  const tail = await timed({ tail: TAKEN });
  assert.deepEqual([few.answer.stdout.first_line, few.answer.stdout.last_line], [LINES - FEW + 1, LINES]);
  assert.deepEqual([tail.answer.stdout.first_line, tail.answer.stdout.last_line], [LINES - TAKEN + 1, LINES]);
  report(t, { few_ms: Math.round(few.ms), tail_ms: Math.round(tail.ms) });
  // Before: 60.4 s against 1.0 s for a head of as many.
  assert.ok(
    tail.ms < 10 * few.ms,
    `a tail of ${TAKEN} took ${Math.round(tail.ms)} ms, of ${FEW} ${Math.round(few.ms)} ms`,
  );
});
