// Fuzz of what pty tasks print (fast-check): escape sequences with numbers of two billion and more,
// floods of clears and resets, strings that never end, cursors far off the screen, C1 controls and
// broken UTF-8, on terminals from 1x1 to 1000x1000, read every way output and status allow (clean
// text, raw, screen, grep, head, tail, max_bytes, since cursors, tails). Every read is answered (a
// screen that takes more than a call's budget with ERR_SCREEN_TOO_COSTLY), /healthz answers all
// the while, and the daemon is healthy after. Seeded; HIVE_FUZZ_SEED replays (fuzz/runs.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { withTimeout } from '../../src/with-timeout.js';
import { report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { latencyFigures, watchHealthz } from '../helpers/stall.js';
import { assertHealthy, assertToolError, TIMED_OUT } from './fuzz/checks.js';
import { DAEMON_ARGS, params, TEST_TIMEOUT_MS } from './fuzz/runs.js';
import { terminalBytes, terminalSize } from './fuzz/terminal-bytes.js';

const CALL_TIMEOUT_MS = 30_000;
/** Every way output reads a stream, but since (read below in pages). */
const READS: Array<Record<string, unknown>> = [
  {},
  { raw: true },
  { tail: 3 },
  { head: 2, max_bytes: 300 },
  { max_bytes: 64 },
  { grep: 't|L|\\*' },
  { grep: '[0-9]{2,}', context: 1 },
  { screen: true },
];

/** One call, answered in time with a result or a tool error the daemon means. */
async function read(tools: ToolClient, tool: string, args: Record<string, unknown>): Promise<any> {
  const what = `${tool} ${JSON.stringify(args)}`;
  const answer = await withTimeout(tools.call(tool, args), CALL_TIMEOUT_MS, TIMED_OUT);
  if (answer === TIMED_OUT) assert.fail(`${what} got no answer within ${CALL_TIMEOUT_MS} ms`);
  if (!answer.isError) return answer.structured;
  assertToolError(answer.structured, answer.text, what);
  assert.ok(args.screen === true, `${what} was refused: ${answer.text}`);
  assert.equal(answer.structured.error.code, 'ERR_SCREEN_TOO_COSTLY', what);
  return null;
}

test(
  'random escape sequences on real terminals, read every way: every read is answered, and /healthz all the while',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
    const tools = await connectClient(t, daemon.url);
    const dir = mkdtempSync(join(tmpdir(), 'hive-bash-fuzz-terminal-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const health = watchHealthz(daemon.origin);
    let runs = 0;
    let screensRefused = 0;
    try {
      await fc.assert(
        fc.asyncProperty(terminalBytes, terminalSize, async (bytes, size) => {
          const file = join(dir, `printed-${runs++}`);
          writeFileSync(file, bytes);
          const run = await read(tools, 'run', {
            command: `cat ${file}`,
            pty: true,
            ...size,
            name: 'term',
            wait_seconds: 30,
          });
          assert.equal(run.state, 'done', `cat of ${bytes.length} bytes on a ${size.cols}x${size.rows} terminal`);
          for (const args of READS)
            if ((await read(tools, 'output', { id: 'term', ...args })) === null) screensRefused++;
          for (let since: string | undefined, page = 0; page < 4; page++) {
            const answer = await read(tools, 'output', { id: 'term', head: 20, ...(since ? { since } : {}) });
            if (answer.stdout.first_line === null) break;
            since = answer.next;
          }
          await read(tools, 'status', { id: 'term', tail_bytes: 65536 });
        }),
        params(25),
      );
    } finally {
      const { failures, latencies } = await health.stop();
      report(t, { fuzz: 'terminal', runs, screens_refused: screensRefused, healthz_ms: latencyFigures(latencies) });
      assert.deepEqual(failures, [], '/healthz answered every time');
    }
    await assertHealthy(t, daemon, tools);
  },
);
