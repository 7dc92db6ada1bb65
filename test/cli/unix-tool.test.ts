// hive-bash as a Unix tool: a task's bash reads as bash -c.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { runCli } from './cli.js';

test('hive-bash as a Unix tool against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const cli = (...args: string[]) => runCli(t, daemon.url, args);

  await t.test('a syntax error and $BASH_EXECUTION_STRING read as under bash -c, but for eval and set -x', async () => {
    const asTask = async (command: string) => {
      const task = JSON.parse((await cli('--json', 'run', '--wait', '20', '--', command)).stdout);
      return { code: task.exit_code, stdout: task.stdout_tail, stderr: task.stderr_tail };
    };
    const local = (command: string) => {
      const ran = spawnSync('bash', ['-c', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      return { code: ran.status, stdout: ran.stdout, stderr: ran.stderr };
    };
    const syntax = 'echo before\nif true; then echo )\nfi';
    const expected = local(syntax);
    assert.match(expected.stderr, /^bash: -c: line 2: syntax error/);
    assert.deepEqual(await asTask(syntax), {
      ...expected,
      stderr: expected.stderr.replaceAll('bash: -c:', 'bash: eval:'),
    });
    const string = 'echo "$BASH_EXECUTION_STRING"; declare -p BASH_EXECUTION_STRING';
    assert.deepEqual(await asTask(string), local(string));
    const trace = 'set -x; echo traced';
    const traced = local(trace);
    assert.deepEqual(await asTask(trace), { ...traced, stderr: traced.stderr.replace(/^\+/gm, '++') });
  });
});
