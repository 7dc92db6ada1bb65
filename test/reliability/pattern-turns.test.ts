// Pattern work is shared between clients: one client's costly greps wait behind each other on the
// pattern thread, not in front of another client's cheap one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { COSTLY_GREP } from '../helpers/stall.js';

/** Greps of it sent at once by the costly client: each runs to its budget, about 3.6 s. */
const COSTLY_GREPS = 4;

test("one session's costly greps take turns with another session's cheap grep: it is answered after one of them, not all", async (t) => {
  const daemon = await startTestDaemon(t);
  const costly = await connectClient(t, daemon.url);
  const cheap = await connectClient(t, daemon.url);
  const { command, pattern } = COSTLY_GREP;
  await costly.ok('run', { command, name: 'aaa', wait_seconds: 30 });
  await cheap.ok('run', { command: 'echo small', name: 'small', wait_seconds: 30 });
  let costlyDone = 0;
  const started = Date.now();
  const greps = Array.from({ length: COSTLY_GREPS }, () =>
    costly.call('output', { id: 'aaa', grep: pattern }).finally(() => costlyDone++),
  );
  // Answered after the greps reached the daemon: calls without the reader threads.
  await costly.ok('status', { id: 'aaa' });
  await cheap.ok('status', { id: 'small' });
  const answer = await cheap.ok('output', { id: 'small', grep: 'sm.ll' });
  const doneBeforeCheap = costlyDone;
  const cheapMs = Date.now() - started;
  assert.equal(answer.stdout.text, '1:small\n');
  for (const refused of await Promise.all(greps))
    assert.equal(refused.structured.error.code, 'ERR_PATTERN_TOO_COSTLY', refused.text);
  // First come first served, the cheap grep came back after all four (3 or 4 of them answered by then).
  assert.ok(
    doneBeforeCheap <= 1,
    `the cheap grep waited for ${doneBeforeCheap} of the ${COSTLY_GREPS} costly ones, not at most the one running`,
  );
  report(t, {
    costly_greps: COSTLY_GREPS,
    costly_done_before_cheap: doneBeforeCheap,
    cheap_answered_ms: cheapMs,
    all_costly_ms: Date.now() - started,
  });
});
