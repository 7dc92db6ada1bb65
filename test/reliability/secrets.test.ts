// The daemon's own secrets stay out of its tasks' environments: none of its HIVE_BASH_* settings
// is passed on (src/supervisor/tasks/task-environment.ts), so neither the bearer token nor the
// path of the file it came from, given by flag or by variable, is in what a task sees.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test("the daemon's token and its --auth-token-file path are never in a task's environment", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-secret-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const token = `tok-${randomBytes(16).toString('hex')}`;
  const tokenFile = join(dir, 'daemon-token');
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  const daemon = await startTestDaemon(t, {
    args: ['--auth-token-file', tokenFile],
    env: { HIVE_BASH_AUTH_TOKEN_FILE: tokenFile, BATTERY_INHERITED: 'from-the-daemon' },
  });
  const tools = await connectClient(t, daemon.url, { authorization: `Bearer ${token}` });

  for (const pty of [false, true]) {
    // The leader's environment and a grandchild's, as env and as the kernel holds it.
    const task = await tools.ok('run', {
      command: 'env; bash -c \'tr "\\0" "\\n" < /proc/$$/environ\'',
      pty,
      wait_seconds: 30,
    });
    assert.equal(task.state, 'done');
    const { stdout_path: path } = task;
    const output = readFileSync(path, 'utf8');
    assert.equal(
      output.match(/^BATTERY_INHERITED=from-the-daemon\r?$/gm)?.length,
      2,
      'the daemon environment is inherited by the leader and its child, so the checks below mean something',
    );
    assert.match(output, new RegExp(`^HIVE_BASH_TASK_ID=${task.id}\\r?$`, 'm'), "the daemon's markers are set");
    assert.ok(!output.includes(token), `the token is in the task's environment (pty ${pty})`);
    assert.ok(!output.includes(tokenFile), `the token file's path is in the task's environment (pty ${pty})`);
    assert.doesNotMatch(output, /^HIVE_BASH_AUTH/m);
  }
});
