// Property-based fuzz (fast-check) of every tool's arguments through the SDK's own client, which
// validates structured content against each tool's output schema, error results included: wrong
// types, huge and unsafe numbers, long strings with NUL and lone surrogates, unknown and __proto__
// keys, nesting thousands deep. Every call is answered in time with a result or a known tool
// error, never an internal one, and the daemon stays up, quiet in its error log, with no task left.
//
// Runs: small by default (CI); HIVE_FUZZ_RUNS=N runs every property N times; HIVE_FUZZ_SEED=S
// replays the seed every run prints first; HIVE_FUZZ_NO_SHRINK=1 stops at the first failure
// (fuzz/runs.ts). The raw JSON-RPC envelopes are fuzzed in fuzz-envelopes.test.ts; the defects
// the fuzz found are tests of their own in fuzz-defects.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { withTimeout } from '../../src/with-timeout.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { assertHealthy, assertToolError, describeArgs, TIMED_OUT } from './fuzz/checks.js';
import { DAEMON_ARGS, params, TEST_TIMEOUT_MS } from './fuzz/runs.js';
import { toolCall } from './fuzz/values.js';

/** A tool call that gets no answer in this time hangs: a failure. */
const CALL_TIMEOUT_MS = 30_000;

test(
  'every tool call with arbitrary arguments returns in time: a result or a known tool error, never an internal one',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
    const tools = await connectClient(t, daemon.url);
    let calls = 0;
    let errors = 0;
    await fc.assert(
      fc.asyncProperty(toolCall, async ({ tool, args }) => {
        const what = `${tool} ${describeArgs(args)}`;
        calls++;
        // Throws on a JSON-RPC error and on structured content the schema refuses; a time-out fails here.
        const result = await withTimeout(tools.call(tool, args), CALL_TIMEOUT_MS, TIMED_OUT);
        if (result === TIMED_OUT) assert.fail(`${what} got no answer within ${CALL_TIMEOUT_MS} ms`);
        if (result.isError) {
          errors++;
          assertToolError(result.structured, result.text, what);
        } else {
          assert.ok(result.structured !== null && typeof result.structured === 'object', what);
          assert.ok(
            result.structured.error === undefined ||
              result.structured.error === null ||
              typeof result.structured.error === 'string',
            what,
          );
        }
      }),
      params(200),
    );
    t.diagnostic(`${calls} calls, ${errors} tool errors`);
    await assertHealthy(t, daemon, tools);
  },
);
