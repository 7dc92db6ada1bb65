// hive-bash as a Unix tool: a reader that goes away early ends it quietly (141, or the task's code
// where it reports a task that has ended), run's exit status says whether the task ended within
// the wait, and a task's bash reads as bash -c.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { awaitGate, runCli, runShell } from './cli.js';

test('hive-bash as a Unix tool against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const gates = mkdtempSync(join(tmpdir(), 'hive-bash-cli-'));
  t.after(() => rmSync(gates, { recursive: true, force: true }));
  let gateCount = 0;
  const newGate = () => join(gates, `gate-${++gateCount}`);
  const cli = (...args: string[]) => runCli(t, daemon.url, args);
  const shell = (script: string) => runShell(t, daemon.url, script);
  const statusOf = async (id: string) => JSON.parse((await cli('--json', 'status', id)).stdout);
  /** A reader that takes the first line, then closes the pipe and opens `gate`: the CLI's next write fails. */
  const headThenOpen = (gate: string) => `{ head -n 1; exec 0<&-; : > ${gate}; }`;

  const ran = await cli('run', '--name', 'long', '--wait', '20', '--', 'seq 100000; exit 5');
  assert.equal(ran.code, 5, ran.stderr);

  await t.test('follow | head -1 of a running task ends quietly with 141 at its next write', async () => {
    const gate = newGate();
    await cli('run', '--name', 'ticking', '--detach', '--', `echo first; ${awaitGate(gate)}; echo second; sleep 600`);
    const result = await shell(`hive-bash follow ticking | ${headThenOpen(gate)}; echo "exit \${PIPESTATUS[0]}"`);
    assert.deepEqual([result.stdout, result.stderr], ['first\nexit 141\n', '']);
    assert.equal((await statusOf('ticking')).state, 'running', 'the task runs on');
    assert.equal((await cli('kill', 'ticking', '--force')).code, 0);
  });

  await t.test("follow | head -1 of a task that has ended exits with the task's code", async () => {
    const result = await shell('hive-bash follow long -n all | head -n 1; echo "exit ${PIPESTATUS[0]}"');
    assert.deepEqual([result.stdout, result.stderr], ['1\nexit 5\n', '']);
  });

  await t.test('logs | head -1 ends quietly with 141; wait keeps the exit code of the tasks', async () => {
    const result = await shell('hive-bash logs long | head -n 1; echo "exit ${PIPESTATUS[0]}"');
    assert.deepEqual([result.stdout, result.stderr], ['1\nexit 141\n', '']);
    for (const code of [4, 0]) {
      const gate = newGate();
      await cli('run', '--name', `exits-${code}`, '--detach', '--', `${awaitGate(gate)}; exit ${code}`);
      const waited = await shell(
        `hive-bash wait exits-${code} | { exec 0<&-; : > ${gate}; }; echo "exit \${PIPESTATUS[0]}"`,
      );
      assert.deepEqual([waited.stdout, waited.stderr], [`exit ${code}\n`, '']);
    }
  });

  await t.test('logs --stdout through a slow reader: every byte reaches it before hive-bash exits', async () => {
    const size = readFileSync((await statusOf('long')).stdout_path).length;
    const result = await shell('hive-bash logs long --stdout | dd bs=1 status=none | wc -c');
    assert.deepEqual([result.stdout.trim(), result.stderr], [String(size), '']);
  });

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
