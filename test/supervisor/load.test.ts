import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

test('200 concurrent short tasks with --max-running 8 all finish with their own result', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-running', '8'] });
  const clients = await Promise.all(Array.from({ length: 4 }, () => connectClient(t, daemon.url)));
  const counts = async () =>
    ((await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as any).tasks as Record<string, number>;
  // No task can end before the test opens the gate, so the daemon must fill every slot and queue the rest.
  const go = join(daemon.scratch, 'go');
  const runs = Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      clients[i % 4]!.ok('run', {
        command: `while [ ! -e ${go} ]; do sleep 0.01; done; sleep 0.0$((${i} % 5)); echo "task ${i}"; echo "err ${i}" >&2; exit $((${i} % 7))`,
        wait_seconds: 30,
      }),
    ),
  );
  let seen: Record<string, number> = {};
  const held = await waitFor(async () => {
    seen = await counts();
    return seen.running! + seen.pending! === 200 && seen.running! >= 8;
  }, 30_000);
  assert.ok(held, `all 200 were accepted and the slots filled: ${JSON.stringify(seen)}`);
  assert.equal(seen.running, 8, 'as many ran at once as --max-running allows, and no more');
  assert.equal(seen.pending, 192);
  writeFileSync(go, '');
  // While they churn through the slots, one poll at a time, the limit still holds.
  let finished = false;
  let peakRunning = 0;
  const watching = (async () => {
    while (!finished) peakRunning = Math.max(peakRunning, (await counts()).running!);
  })();
  const results = await runs.finally(() => (finished = true));
  await watching;
  results.forEach((task, i) => {
    assert.equal(task.state, 'done', `task ${i}`);
    assert.equal(task.exit_code, i % 7, `task ${i}`);
    assert.equal(task.stdout_tail, `task ${i}\n`);
    assert.equal(task.stderr_tail, `err ${i}\n`);
  });
  assert.equal(new Set(results.map((task) => task.id)).size, 200);
  assert.ok(peakRunning <= 8, `at most 8 ran at once, saw ${peakRunning}`);
  const health = await counts();
  assert.equal(health.done, 200);
  // Under Node's spawn the start warns, as it must, that tasks share the daemon's namespaces.
  const logged = daemon
    .stderr()
    .split('\n')
    .filter((line) => !(daemon.containment === 'node' && line.includes('"needs the native spawner, which joins it"')));
  assert.doesNotMatch(logged.join('\n'), /Warning|"level":[4-6]0/, 'no warnings or errors were logged');
});

test('a burst of 600 runs arriving at once all start and finish (no spawner stalls on its answers)', async (t) => {
  // Batches of 100 reach the workers in a few turns of their loops, so each thread sends its
  // spawner hundreds of requests before it reads an answer.
  const daemon = await startTestDaemon(t, { args: ['--max-running', '1000'] });
  const init = await fetch(daemon.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
  await init.text();
  const session = { ...MCP_HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id')! };
  const batches = await Promise.all(
    Array.from({ length: 6 }, async (_, b) => {
      const body = Array.from({ length: 100 }, (_, i) => ({
        jsonrpc: '2.0',
        id: b * 100 + i + 1,
        method: 'tools/call',
        params: { name: 'run', arguments: { command: `echo burst-${b * 100 + i}`, wait_seconds: 30 } },
      }));
      const res = await fetch(daemon.url, { method: 'POST', headers: session, body: JSON.stringify(body) });
      return (await res.json()) as Array<{
        id: number;
        result: { structuredContent: { state: string; stdout_tail: string } };
      }>;
    }),
  );
  const answers = batches.flat();
  assert.equal(answers.length, 600);
  for (const answer of answers) {
    assert.equal(answer.result.structuredContent.state, 'done', `request ${answer.id}`);
    assert.equal(answer.result.structuredContent.stdout_tail, `burst-${answer.id - 1}\n`);
  }
});
