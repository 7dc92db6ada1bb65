// hive-bash run, list (ps), status, kill and todos against a real daemon, in human and --json form.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { awaitGate, runCli } from './cli.js';

test('hive-bash commands against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const gates = mkdtempSync(join(tmpdir(), 'hive-bash-cli-'));
  const gate = join(gates, 'open');
  t.after(() => rmSync(gates, { recursive: true, force: true }));
  const cli = (...args: string[]) => runCli(t, daemon.url, args);
  const json = async (...args: string[]) => {
    const result = await cli('--json', ...args);
    return { ...result, body: JSON.parse(result.stdout) };
  };

  await t.test(
    'run prints the id and the result of a task that ended within the wait, with its exit code',
    async () => {
      const result = await cli('run', '--name', 'quick', '--wait', '20', '--', 'echo out; echo err >&2; exit 3');
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stdout, /^quick\ndone: exit 3 after \S+\n--- stdout ---\nout\n--- stderr ---\nerr\n$/);
      assert.equal(result.stderr, '');
    },
  );

  await t.test('run --json prints the tool result; --cwd and --env reach the task', async () => {
    const { code, body } = await json(
      'run',
      '--name',
      'quick-json',
      '--wait',
      '20',
      '--cwd',
      gates,
      '--env',
      'GREETING=hello there',
      '--',
      'echo "$PWD:$GREETING"',
    );
    assert.equal(code, 0);
    assert.equal(body.id, 'quick-json');
    assert.equal(body.state, 'done');
    assert.equal(body.exit_code, 0);
    assert.equal(body.stdout_tail, `${gates}:hello there\n`);
  });

  await t.test('run of a task that outlives the wait prints only its id, says so and exits 124', async () => {
    const result = await cli('run', '--name', 'long', '--wait', '0', '--', awaitGate(gate));
    assert.deepEqual(
      [result.code, result.stdout, result.stderr],
      [124, 'long\n', 'hive-bash run: long still running when the wait ended; hive-bash wait long waits for its end\n'],
    );
  });

  await t.test('list and ps show a table, newest first; --json has the tool fields', async () => {
    for (const name of ['older', 'newer'])
      assert.equal((await cli('run', '--name', name, '--wait', '20', '--', 'true')).code, 0);
    const table = await cli('ps');
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID +STATE +AGE +RUNTIME +CPU +MEM +PROCS +EXIT +COMMAND$/);
    const rowOf = (id: string) => lines.findIndex((line) => line.startsWith(`${id} `));
    assert.ok(rowOf('newer') > 0 && rowOf('newer') < rowOf('older'), table.stdout);
    assert.match(lines[rowOf('quick')]!, /^quick +done .* 3 +echo out; echo err >&2; exit 3$/);
    const { code, body } = await json('list', '--limit', '2');
    assert.equal(code, 0);
    assert.deepEqual(
      body.tasks.map((task: { id: string }) => task.id),
      ['newer', 'older'],
    );
    assert.equal(typeof body.tasks[0].created_at, 'string');
    const running = await json('list', '--state', 'running');
    assert.deepEqual(
      running.body.tasks.map((task: { id: string }) => task.id),
      ['long'],
    );
  });

  await t.test('status shows every field a line, the tails last; --json is the tool result', async () => {
    const result = await cli('status', 'quick');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^id +quick\nname +quick\nstate +done\nexit +3\n/);
    assert.match(result.stdout, /\nstdout +\S+quick\.out \(4B\)\nstderr +\S+quick\.err \(4B\)\n/);
    assert.ok(
      result.stdout.endsWith('\n--- stdout (all of it) ---\nout\n\n--- stderr (all of it) ---\nerr\n'),
      result.stdout,
    );
    const { body } = await json('status', 'quick');
    assert.equal(body.exit_code, 3);
    assert.equal(body.stderr_tail, 'err\n');
    assert.ok(existsSync(body.stdout_path));
  });

  await t.test('todos shows the outbox (no harness socket here) and --json its fields', async () => {
    const result = await cli('todos');
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^harness socket: none configured \(--agent-socket\)\noutbox: \d+ waiting\n/);
    assert.match(result.stdout, /\nlong +\d+ +\S+ +todo_upsert +running +bash task long running/);
    const { body } = await json('todos');
    assert.equal(body.socket, null);
    assert.equal(body.harness_connected, false);
    assert.ok(
      body.outbox.some((entry: { key: string }) => entry.key === 'long'),
      JSON.stringify(body),
    );
  });

  await t.test('kill signals one task and prints what it sent; wait then sees it end by that signal', async () => {
    await cli('run', '--name', 'victim', '--detach', '--', awaitGate(gate));
    const result = await cli('kill', 'victim', '--signal', 'term');
    assert.equal(result.code, 0, result.stderr);
    assert.equal(
      result.stdout,
      'sent SIGTERM to task victim; anything still alive after the grace period gets SIGKILL\n',
    );
    const waited = await cli('wait', 'victim');
    assert.equal(waited.code, 128 + 15, waited.stdout + waited.stderr);
    assert.match(waited.stdout, /^victim killed: exit 143 \(SIGTERM\) after /);
  });

  await t.test('a task killed or timed out that exits 0 anyway (a trap) is never a success: 143 and 124', async () => {
    const trapped = "trap 'exit 0' INT TERM; sleep 600 & wait";
    await cli('run', '--name', 'trapped', '--detach', '--', trapped);
    assert.equal((await cli('kill', 'trapped')).code, 0);
    const waited = await cli('wait', 'trapped');
    // Before, 0: `hive-bash wait build && deploy` deployed after a kill.
    assert.equal(waited.code, 143, waited.stdout + waited.stderr);
    assert.match(waited.stdout, /^trapped killed: exit 0 after /);
    const timed = await cli('run', '--name', 'trapped-timeout', '--timeout', '1', '--wait', '20', '--', trapped);
    assert.equal(timed.code, 124, timed.stdout + timed.stderr);
    assert.match(timed.stdout, /^trapped-timeout\ntimed_out: exit 0 after /);
  });

  await t.test('kill --all ends every running task and --json lists each result', async () => {
    for (const name of ['fleet-1', 'fleet-2', 'fleet-3'])
      await cli('run', '--name', name, '--detach', '--', awaitGate(gate));
    const { code, body } = await json('kill', '--all', '--force');
    assert.equal(code, 0);
    const ids = body.results.map((result: { id: string }) => result.id).sort();
    assert.deepEqual(ids, ['fleet-1', 'fleet-2', 'fleet-3', 'long']);
    assert.ok(body.results.every((result: { signal: string }) => result.signal === 'SIGKILL'));
    assert.deepEqual(body.errors, []);
    const waited = await cli('wait', 'fleet-1', 'fleet-2', 'fleet-3', 'long');
    assert.equal(waited.code, 128 + 9, waited.stdout);
    const nothing = await cli('kill', '--all');
    assert.deepEqual([nothing.code, nothing.stdout], [0, 'no pending or running tasks to kill\n']);
  });

  await t.test('--help on every command, and usage errors exit 2 with one line', async () => {
    const main = await cli('--help');
    assert.equal(main.code, 0);
    assert.match(main.stdout, /\nExit codes:\n {2}0 .*\n( {5}.*\n)* {2}1 .*\n {2}2 .*\n {2}3 .*\n {2}124 .*\n {2}141 /);
    const names = ['list', 'ps', 'status', 'follow', 'logs', 'wait', 'kill', 'run', 'top', 'todos'];
    const helps = await Promise.all(names.map((name) => cli(name, '--help')));
    helps.forEach((help, index) => {
      assert.equal(help.code, 0, names[index]);
      assert.match(help.stdout, /^Usage: hive-bash \S+[^]*\nFlags:\n[^]*\nExit codes:\n/, names[index]);
    });
    const bad = await cli('list', '--bogus');
    assert.deepEqual(
      [bad.code, bad.stdout, bad.stderr],
      [2, '', 'hive-bash list: unknown flag --bogus; hive-bash list --help lists what it accepts\n'],
    );
    const timeout = await cli('wait', 'quick', '--timeout', 'soon');
    assert.deepEqual(
      [timeout.code, timeout.stderr],
      [2, 'hive-bash wait: --timeout must be a number of seconds above 0 and at most 31536000; got "soon"\n'],
    );
    const unknown = await cli('frob');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^hive-bash: unknown command "frob"; the commands are list, status, /);
  });

  writeFileSync(gate, '');
});
