// hive-bash as a Unix tool: run's exit status says whether the task ended within the wait, and a
// task's bash reads as bash -c.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { awaitGate, runCli } from './cli.js';

test('hive-bash as a Unix tool against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const gates = mkdtempSync(join(tmpdir(), 'hive-bash-cli-'));
  t.after(() => rmSync(gates, { recursive: true, force: true }));
  let gateCount = 0;
  const newGate = () => join(gates, `gate-${++gateCount}`);
  const cli = (...args: string[]) => runCli(t, daemon.url, args);

  await t.test("run exits with the task's code, 124 when the wait ends first, 0 with --detach", async () => {
    const gate = newGate();
    const early = await cli('run', '--name', 'slow', '--wait', '1', '--', `${awaitGate(gate)}; exit 5`);
    assert.deepEqual(
      [early.code, early.stdout, early.stderr],
      [124, 'slow\n', 'hive-bash run: slow still running when the wait ended; hive-bash wait slow waits for its end\n'],
    );
    writeFileSync(gate, '');
    assert.equal((await cli('wait', 'slow')).code, 5);
    assert.equal((await cli('run', '--wait', '5', '--', 'exit 5')).code, 5);
    assert.equal((await cli('run', '--wait', '5', '--', 'kill -TERM $$')).code, 128 + 15);
    const detached = await cli('run', '--name', 'detached', '--detach', '--', awaitGate(newGate()));
    assert.deepEqual([detached.code, detached.stdout, detached.stderr], [0, 'detached\n', '']);
    const both = await cli('run', '--detach', '--wait', '1', '--', 'true');
    assert.deepEqual(
      [both.code, both.stderr],
      [2, 'hive-bash run: give --detach (start it, do not wait) or --wait S, not both; got --detach and --wait 1\n'],
    );
    assert.equal((await cli('kill', 'detached', '--force')).code, 0);
  });

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
