// hive-bash follow (logs -f), logs and wait: output as it grows, exit codes as a shell's, 124 on
// timeout, --until returning while the task still runs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/processes.js';
import { awaitGate, runCli, startCli } from './cli.js';

test('hive-bash follow and wait against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const gates = mkdtempSync(join(tmpdir(), 'hive-bash-cli-'));
  t.after(() => rmSync(gates, { recursive: true, force: true }));
  let gateCount = 0;
  const newGate = () => join(gates, `gate-${++gateCount}`);
  const open = (gate: string) => writeFileSync(gate, '');
  const cli = (...args: string[]) => runCli(t, daemon.url, args);
  const start = async (name: string, command: string) =>
    assert.equal((await cli('run', '--name', name, '--detach', '--', command)).code, 0);

  await t.test('follow prints the output as it grows, stderr marked, and exits with the task code', async () => {
    const gate = newGate();
    await start('ticker', `echo line 1; echo warn >&2; ${awaitGate(gate)}; echo line 2; exit 3`);
    const follow = startCli(t, daemon.url, ['follow', 'ticker']);
    await waitFor(() => follow.stdout().includes('line 1\n') && follow.stdout().includes('[stderr] warn\n'));
    assert.ok(!follow.stdout().includes('line 2'), 'nothing of the rest before the gate opens');
    open(gate);
    const result = await follow.done;
    assert.deepEqual([result.code, result.stdout, result.stderr], [3, 'line 1\n[stderr] warn\nline 2\n', '']);
  });

  await t.test('follow -n shows that many lines first; --stdout alone; logs prints what is there', async () => {
    assert.equal(
      (await cli('run', '--name', 'history', '--wait', '20', '--', 'printf "a\\nb\\nc\\n"; echo e >&2')).code,
      0,
    );
    assert.deepEqual(await cli('follow', 'history', '-n', '1'), { code: 0, stdout: 'c\n[stderr] e\n', stderr: '' });
    assert.deepEqual(await cli('logs', '-f', 'history', '-n', '2', '--stdout'), {
      code: 0,
      stdout: 'b\nc\n',
      stderr: '',
    });
    assert.deepEqual(await cli('logs', 'history', '--stderr'), { code: 0, stdout: 'e\n', stderr: '' });
    assert.deepEqual(await cli('logs', 'history'), { code: 0, stdout: 'a\nb\nc\n[stderr] e\n', stderr: '' });
    const json = await cli('follow', 'history', '--json');
    assert.equal(json.code, 0);
    assert.equal(JSON.parse(json.stdout).stdout_tail, 'a\nb\nc\n');
  });

  await t.test('follow of a task ended by a signal exits with 128+N', async () => {
    await start('doomed', awaitGate(newGate()));
    const follow = startCli(t, daemon.url, ['follow', 'doomed']);
    assert.equal((await cli('kill', 'doomed', '--signal', 'SIGTERM')).code, 0);
    const result = await follow.done;
    assert.equal(result.code, 128 + 15, result.stderr);
  });

  await t.test('wait blocks until every task has ended and exits with the first non-zero code', async () => {
    const gate = newGate();
    await start('w-ok', `${awaitGate(gate)}; exit 0`);
    await start('w-four', `${awaitGate(gate)}; exit 4`);
    await start('w-five', `${awaitGate(gate)}; exit 5`);
    const wait = startCli(t, daemon.url, ['wait', 'w-ok', 'w-four', 'w-five']);
    open(gate);
    const result = await wait.done;
    assert.equal(result.code, 4, result.stderr);
    assert.match(
      result.stdout,
      /^w-ok done: exit 0 after \S+\nw-four done: exit 4 after \S+\nw-five done: exit 5 after \S+\n$/,
    );
    const allOk = await cli('--json', 'wait', 'w-ok', 'history');
    assert.equal(allOk.code, 0);
    assert.deepEqual(
      JSON.parse(allOk.stdout).tasks.map((task: { outcome: string }) => task.outcome),
      ['ended', 'ended'],
    );
  });

  await t.test('wait --timeout exits 124 when the time passes first, naming what still runs', async () => {
    await start('w-stuck', awaitGate(newGate()));
    const result = await cli('wait', 'w-stuck', 'w-ok', '--timeout', '0.5');
    assert.equal(result.code, 124);
    assert.match(result.stdout, /^w-stuck still running\nw-ok done: exit 0 after \S+\n$/);
    assert.equal(result.stderr, 'hive-bash wait: --timeout 0.5 s passed first; still going: w-stuck\n');
  });

  await t.test('wait --until returns as soon as the output matches, while the task still runs', async () => {
    await start('server', `echo starting; echo "listening on 4000" >&2; ${awaitGate(newGate())}`);
    const result = await cli('wait', 'server', '--until', 'listening on \\d+');
    assert.deepEqual([result.code, result.stdout], [0, 'server matched /listening on \\d+/: listening on 4000\n']);
    const status = JSON.parse((await cli('--json', 'status', 'server')).stdout);
    assert.equal(status.state, 'running');
    const ended = await cli('--json', 'wait', 'history', '--until', 'never printed');
    assert.equal(ended.code, 1, 'a task that ended without a match counts as a failure');
    assert.equal(JSON.parse(ended.stdout).tasks[0].outcome, 'ended');
  });
});
