// hive-bash as a Unix tool: a reader that goes away early ends it quietly (141, or the task's code
// where it reports a task that has ended), --stdout and --stderr are the files' bytes, run's exit
// status says whether the task ended within the wait, and a task's bash reads as bash -c.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/processes.js';
import { awaitGate, runCli, runShell, startCli } from './cli.js';

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
    for (const flag of ['', '--stdout']) {
      const gate = newGate();
      const name = `ticking${flag}`;
      await cli('run', '--name', name, '--detach', '--', `echo first; ${awaitGate(gate)}; echo second; sleep 600`);
      const result = await shell(
        `hive-bash follow ${name} ${flag} | ${headThenOpen(gate)}; echo "exit \${PIPESTATUS[0]}"`,
      );
      assert.deepEqual([result.stdout, result.stderr], ['first\nexit 141\n', ''], flag);
      assert.equal((await statusOf(name)).state, 'running', 'the task runs on');
      assert.equal((await cli('kill', name, '--force')).code, 0);
    }
  });

  await t.test("follow | head -1 of a task that has ended exits with the task's code", async () => {
    for (const flag of ['', '--stdout']) {
      const result = await shell(`hive-bash follow long -n all ${flag} | head -n 1; echo "exit \${PIPESTATUS[0]}"`);
      assert.deepEqual([result.stdout, result.stderr], ['1\nexit 5\n', ''], flag);
    }
  });

  await t.test('logs | head -1 ends quietly with 141; wait keeps the exit code of the tasks', async () => {
    for (const flag of ['', '--stdout']) {
      const result = await shell(`hive-bash logs long ${flag} | head -n 1; echo "exit \${PIPESTATUS[0]}"`);
      assert.deepEqual([result.stdout, result.stderr], ['1\nexit 141\n', ''], flag);
    }
    for (const code of [4, 0]) {
      const gate = newGate();
      await cli('run', '--name', `exits-${code}`, '--detach', '--', `${awaitGate(gate)}; exit ${code}`);
      const waited = await shell(
        `hive-bash wait exits-${code} | { exec 0<&-; : > ${gate}; }; echo "exit \${PIPESTATUS[0]}"`,
      );
      assert.deepEqual([waited.stdout, waited.stderr], [`exit ${code}\n`, '']);
    }
  });

  await t.test('logs --stdout, --stderr and follow --stdout are the bytes of the files', async () => {
    const write = "printf 'a\\r\\nb\\0\\xff'; printf 'e\\r\\n\\xfe\\0' >&2";
    assert.equal((await cli('run', '--name', 'bytes', '--wait', '20', '--', write)).code, 0);
    const status = await statusOf('bytes');
    const [out, err] = [readFileSync(status.stdout_path), readFileSync(status.stderr_path)];
    assert.deepEqual(out, Buffer.from('a\r\nb\0\xff', 'latin1'));
    const bytes = (...args: string[]) => startCli(t, daemon.url, args).stdoutBytes;
    assert.deepEqual(await bytes('logs', 'bytes', '--stdout'), out);
    assert.deepEqual(await bytes('follow', 'bytes', '--stdout'), out);
    assert.deepEqual(await bytes('logs', 'bytes', '--stderr'), err);
    assert.deepEqual(await bytes('logs', 'bytes', '--stdout', '-n', '1'), Buffer.from('b\0\xff', 'latin1'));
    const gate = newGate();
    await cli(
      'run',
      '--name',
      'growing',
      '--detach',
      '--',
      `printf 'x\\r'; ${awaitGate(gate)}; printf '\\xff\\n'; exit 3`,
    );
    const follow = startCli(t, daemon.url, ['follow', 'growing', '--stdout']);
    await waitFor(() => follow.stdout().length > 0);
    writeFileSync(gate, '');
    assert.equal((await follow.done).code, 3, 'follow --stdout ends with the task, with its code');
    assert.deepEqual(await follow.stdoutBytes, Buffer.from('x\r\xff\n', 'latin1'));
    const view = await cli('logs', 'bytes');
    assert.equal(view.stdout, 'a\n[stderr] e\nb\0\ufffd\n[stderr] \ufffd\0\n', 'without a stream: the view of both');
  });

  await t.test(
    "--stdout where the file cannot be read: the daemon's text, said so on stderr",
    { skip: process.getuid?.() !== 0 && 'needs root, to run hive-bash as another user' },
    async () => {
      const path = (await statusOf('bytes')).stdout_path;
      const result = await shell(
        'setpriv --reuid=65534 --regid=65534 --clear-groups "$HIVE_TEST_NODE" "$HIVE_TEST_CLI" logs bytes --stdout',
      );
      assert.deepEqual(
        [result.stdout, result.stderr],
        [
          'a\nb\0\ufffd',
          `hive-bash logs: cannot read ${path} here (EACCES), so its bytes come as the daemon's text of them: a CR before a newline dropped, bytes that are not UTF-8 as U+FFFD\n`,
        ],
      );
    },
  );

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
