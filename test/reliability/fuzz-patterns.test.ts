// Fuzz of grep and wait_for patterns (fast-check): patterns of quantifiers, classes, escapes and
// alternatives, nested quantifiers repeated (the shapes no engine runs fast), and arbitrary
// strings, against a task's output of ordinary lines and long runs of one letter. Each call is
// answered with its result, or refused with the code of why (ERR_INVALID_INPUT for what V8's
// linear engine refuses, ERR_PATTERN_TOO_COSTLY past the budget); /healthz answers all the while,
// and the daemon is healthy after. Seeded; HIVE_FUZZ_SEED replays (fuzz/runs.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { withTimeout } from '../../src/with-timeout.js';
import { report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { latencyFigures, watchHealthz } from '../helpers/stall.js';
import { assertHealthy, assertToolError, TIMED_OUT } from './fuzz/checks.js';
import { grepPattern, hostilePattern } from './fuzz/patterns.js';
import { DAEMON_ARGS, params, TEST_TIMEOUT_MS } from './fuzz/runs.js';

const CALL_TIMEOUT_MS = 60_000;
const REFUSALS = new Set(['ERR_INVALID_INPUT', 'ERR_PATTERN_TOO_COSTLY']);

const pattern = fc.oneof(
  { weight: 3, arbitrary: grepPattern.map(({ source }) => source) },
  { weight: 2, arbitrary: hostilePattern },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 60 }) },
);

/** One call, answered in time: its result, or the code of a refusal a pattern may get. */
async function call(tools: ToolClient, tool: string, args: Record<string, unknown>, tally: Map<string, number>) {
  const what = `${tool} ${JSON.stringify(args).slice(0, 300)}`;
  const answer = await withTimeout(tools.call(tool, args), CALL_TIMEOUT_MS, TIMED_OUT);
  if (answer === TIMED_OUT) assert.fail(`${what} got no answer within ${CALL_TIMEOUT_MS} ms`);
  const outcome = answer.isError ? answer.structured?.error?.code : 'answered';
  tally.set(outcome, (tally.get(outcome) ?? 0) + 1);
  if (!answer.isError) return;
  assertToolError(answer.structured, answer.text, what);
  assert.ok(REFUSALS.has(outcome), `${what}: ${answer.text}`);
}

test(
  'random and pathological patterns as grep and wait_for: each is answered or refused with its code, and /healthz answers all the while',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
    const tools = await connectClient(t, daemon.url);
    // Ordinary lines and runs of a's and b's, some 3,000 long: work for a pattern of nested quantifiers.
    const command = `for i in $(seq 40); do echo "line $i: ab1 a.b {x} 10.0.0.$i"; head -c $((i * 75)) /dev/zero | tr '\\0' a; echo b; done`;
    await tools.ok('run', { command, name: 'text', wait_seconds: 30 });
    await tools.ok('run', { command: 'sleep 600', name: 'quiet', wait_seconds: 0 });
    const tally = new Map<string, number>();
    const health = watchHealthz(daemon.origin);
    try {
      await fc.assert(
        fc.asyncProperty(pattern, fc.boolean(), async (source, onText) => {
          await call(tools, 'output', { id: 'text', grep: source, context: 1, max_bytes: 4096 }, tally);
          const id = onText ? 'text' : 'quiet';
          await call(tools, 'status', { id, wait_for: source, wait_seconds: 0.2, tail_bytes: 0 }, tally);
        }),
        params(40),
      );
    } finally {
      const { failures, latencies } = await health.stop();
      report(t, { fuzz: 'patterns', outcomes: Object.fromEntries(tally), healthz_ms: latencyFigures(latencies) });
      assert.deepEqual(failures, [], '/healthz answered every time');
    }
    await assertHealthy(t, daemon, tools);
  },
);
