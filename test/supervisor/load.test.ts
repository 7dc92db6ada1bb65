import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test('200 concurrent short tasks with --max-running 8 all finish with their own result', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-running', '8'] });
  const clients = await Promise.all(Array.from({ length: 4 }, () => connectClient(t, daemon.url)));
  let peakRunning = 0;
  const watcher = setInterval(async () => {
    const health = await fetch(`${daemon.origin}/healthz`).then((res) => res.json() as Promise<any>);
    peakRunning = Math.max(peakRunning, health.tasks.running);
  }, 20);
  t.after(() => clearInterval(watcher));
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      clients[i % 4]!.ok('run', { command: `sleep 0.0$((${i} % 5)); echo "task ${i}"; echo "err ${i}" >&2; exit $((${i} % 7))`, wait_seconds: 30 }),
    ),
  );
  clearInterval(watcher);
  results.forEach((task, i) => {
    assert.equal(task.state, 'done', `task ${i}`);
    assert.equal(task.exit_code, i % 7, `task ${i}`);
    assert.equal(task.stdout_tail, `task ${i}\n`);
    assert.equal(task.stderr_tail, `err ${i}\n`);
  });
  assert.equal(new Set(results.map((task) => task.id)).size, 200);
  assert.ok(peakRunning <= 8, `at most 8 ran at once, saw ${peakRunning}`);
  const health = await fetch(`${daemon.origin}/healthz`).then((res) => res.json() as Promise<any>);
  assert.equal(health.tasks.done, 200);
  assert.doesNotMatch(daemon.stderr(), /Warning|"level":[4-6]0/, 'no warnings or errors were logged');
});
