// Output past the cap is dropped as fast as the task writes it: a task that prints far more than
// its cap ends about when the same command writing to /dev/null ends, measured in the same test.
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';

const CAP_BYTES = 64 * 1024 * 1024;
const PRINTED_BYTES = 200_000_000;
const PRINT = `head -c ${PRINTED_BYTES} /dev/zero | tr '\\0' a`;
/** Each side's best of this many runs, taken in turns: the least disturbed by the machine's other work. */
const ROUNDS = 7;
/** The most the capped task may take against the baseline. */
const MAX_RATIO = 2;

/** Runs `command` to its end; returns its status. */
async function runToEnd(tools: ToolClient, command: string): Promise<any> {
  let task = await tools.ok('run', { command, wait_seconds: 30 });
  while (task.state === 'running') task = await tools.ok('status', { id: task.id, wait_seconds: 30, tail_bytes: 0 });
  assert.equal(task.state, 'done', JSON.stringify(task));
  assert.equal(task.exit_code, 0, JSON.stringify(task));
  return task;
}

test('a task printing 200 MB past a 64 MiB cap ends within 2x of the same command into /dev/null, its file cut at the cap', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-output-bytes', String(CAP_BYTES)] });
  const tools = await connectClient(t, daemon.url);
  const capped: number[] = [];
  const discarded: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const sides = [
      async () => {
        const task = await runToEnd(tools, PRINT);
        assert.equal(task.stdout_truncated, true, 'status says the stream was cut');
        assert.equal(task.stdout_truncated_reason, `the cap of ${CAP_BYTES} bytes was reached`);
        assert.equal(statSync(task.stdout_path).size, CAP_BYTES, 'the file holds the cap');
        capped.push(task.runtime_ms);
      },
      async () => discarded.push((await runToEnd(tools, `${PRINT} > /dev/null`)).runtime_ms),
    ];
    if (round % 2 === 1) sides.reverse();
    for (const side of sides) await side();
  }
  const [best, baseline] = [Math.min(...capped), Math.min(...discarded)];
  t.diagnostic(`past the cap: ${capped.join(', ')} ms; into /dev/null: ${discarded.join(', ')} ms`);
  assert.ok(
    best <= MAX_RATIO * Math.max(baseline, 1),
    `past the cap: ${capped.join(', ')} ms; into /dev/null: ${discarded.join(', ')} ms (best ${best} against ${baseline})`,
  );
});
