// The alerting and recording rules shipped in deploy/prometheus/: valid, passing their promtool unit
// tests, and reading only series a running daemon serves; and the daemon's own /metrics passing
// promtool's naming rules.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { promtool, PROMETHEUS_MISSING, RULES_FILE } from '../helpers/prometheus.js';

test('the rules are valid and pass their unit tests', { skip: PROMETHEUS_MISSING }, () => {
  const checked = promtool(['check', 'rules', 'hive-bash.rules.yml']);
  assert.equal(checked.code, 0, checked.output);
  const tested = promtool(['test', 'rules', 'hive-bash.rules.test.yml']);
  assert.equal(tested.code, 0, tested.output);
  assert.match(tested.output, /SUCCESS/);
});

test(
  "every series the rules read is on a daemon's /metrics, which passes promtool check metrics",
  { skip: PROMETHEUS_MISSING },
  async (t) => {
    const daemon = await startTestDaemon(t);
    const tools = await connectClient(t, daemon.url);
    await tools.ok('run', { command: 'echo a task, so that every histogram has a sample', wait_seconds: 30 });
    const metrics = await (await fetch(`${daemon.origin}/metrics`)).text();
    const served = new Set([...metrics.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!));
    // Series names, not the recording rules' (level:name:operation).
    const read = new Set(
      [...readFileSync(RULES_FILE, 'utf8').matchAll(/(?<![:\w])hive_bash_[a-z_]+(?![:\w])/g)].map((match) => match[0]),
    );
    assert.ok(read.size >= 10, `the rules read ${[...read].join(', ')}`);
    assert.deepEqual(
      [...read].filter((name) => !served.has(name)),
      [],
      'series the rules read that the daemon does not serve',
    );
    const checked = promtool(['check', 'metrics'], metrics);
    assert.equal(checked.code, 0, checked.output);
    assert.equal(checked.output.trim(), '', 'no naming problem');
  },
);
