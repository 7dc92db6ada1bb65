// A real Prometheus with deploy/prometheus's rules scrapes a running daemon: its series arrive, and
// the OOM alert fires once a task is really killed by the kernel at its memory limit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';
import { PROMETHEUS_MISSING, RULES_FILE, startPrometheus } from '../helpers/prometheus.js';

/** Allocates in one go, far past the limit the task is given. */
const ALLOCATE = `python3 -c "b = bytearray(400 << 20)"`;
const WAIT_MS = 60_000;

test(
  'Prometheus scrapes the daemon and fires HiveBashTaskOomKilled when a task is OOM-killed',
  { skip: PROMETHEUS_MISSING },
  async (t) => {
    const daemon = await startTestDaemon(t);
    const health = (await (await fetch(`${daemon.origin}/healthz`)).json()) as any;
    if (String(health.limits.memory).startsWith('unavailable'))
      return t.skip(`memory limits are unavailable here: ${health.limits.memory}`);
    const target = new URL(daemon.origin).host;
    const prometheus = await startPrometheus(
      t,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(RULES_FILE)}]`,
        'scrape_configs:',
        `  - { job_name: hive-bash-daemon, static_configs: [{ targets: [${JSON.stringify(target)}] }] }`,
        '',
      ].join('\n'),
    );
    const query = async (expr: string) => (await prometheus.api('query', { query: expr })).result as any[];
    const arrived = await waitFor(async () => (await query('up{job="hive-bash-daemon"} == 1')).length === 1, WAIT_MS);
    assert.ok(arrived, `the daemon was not scraped:\n${prometheus.log()}`);
    for (const series of [
      'hive_bash_build_info',
      'hive_bash_tasks',
      'hive_bash_tasks_oom_killed_total',
      'hive_bash_child_processes',
    ])
      assert.ok((await query(series)).length > 0, `${series} arrived`);
    const alerts = async () => (await prometheus.api('alerts')).alerts as any[];
    assert.deepEqual(
      (await alerts()).filter((alert) => alert.labels.alertname === 'HiveBashTaskOomKilled'),
      [],
      'no OOM alert before an OOM kill',
    );

    const tools = await connectClient(t, daemon.url);
    const task = await tools.ok('run', { command: `exec ${ALLOCATE}`, memory_limit_mb: 64, wait_seconds: 30 });
    assert.equal(task.oom_killed, true, JSON.stringify(task));
    const firing = await waitFor(
      async () =>
        (await alerts()).find(
          (alert) => alert.labels.alertname === 'HiveBashTaskOomKilled' && alert.state === 'firing',
        ),
      WAIT_MS,
    );
    assert.ok(firing, `HiveBashTaskOomKilled did not fire: ${JSON.stringify(await alerts())}\n${prometheus.log()}`);
    assert.equal(firing.labels.instance, target);
    assert.match(firing.annotations.summary, /^The kernel killed tasks on .* at their memory limit/);
    assert.match(firing.annotations.description, /hive-bash status ID/);
  },
);
