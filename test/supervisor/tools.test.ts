import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { awaitGate } from '../cli/cli.js';

test('run returns a quick task inline with its exit code, output and files', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const result = await tools.call('run', { command: 'echo out; echo err >&2; exit 3' });
  assert.notEqual(result.isError, true);
  const task = result.structured;
  assert.equal(task.state, 'done');
  assert.equal(task.exit_code, 3);
  assert.equal(task.signal, null);
  assert.equal(task.error, null);
  assert.equal(task.stdout_tail, 'out\n');
  assert.equal(task.stderr_tail, 'err\n');
  assert.equal(task.stdout_bytes, 4);
  assert.match(task.id, /^task-\d+$/);
  assert.equal(task.stdout_path, `${daemon.stateDir}/harness/bash-tasks/${task.id}.out`);
  assert.equal(statSync(task.stdout_path).mode & 0o777, 0o600);
  assert.equal(statSync(`${daemon.stateDir}/harness/bash-tasks`).mode & 0o777, 0o700);
  assert.ok(task.pid > 0 && task.pgid > 0);
  assert.ok(Date.parse(task.ended_at) >= Date.parse(task.started_at));
  assert.match(result.text, new RegExp(`^task ${task.id} done: exit 3 after \\d+\\.\\d s\\n`));
  assert.match(result.text, /--- stdout \(4 bytes\)/);
});

test('run returns a running task after wait_seconds and status waits for its end', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  // The task cannot finish before the test opens its gate: run's answer is running whatever the machine's speed.
  const gate = join(mkdtempSync(join(tmpdir(), 'hive-bash-gate-')), 'open');
  t.after(() => rmSync(dirname(gate), { recursive: true, force: true }));
  const running = await tools.ok('run', { command: `${awaitGate(gate)}; echo finished`, wait_seconds: 0.2 });
  const answeredAt = Date.now();
  assert.equal(running.state, 'running');
  assert.equal(running.exit_code, null);
  assert.equal(running.ended_at, null);
  // On a loaded machine run's wait can end before the task started: the gate opens once it has.
  const early = await tools.statusWhen(running.id, (view) => view.started_at !== null, 'the task started');
  assert.equal(early.state, 'running');
  writeFileSync(gate, '');
  const openedAt = Date.now();
  const done = await tools.ok('status', { id: running.id, wait_seconds: 30 });
  assert.equal(done.state, 'done');
  assert.equal(done.exit_code, 0);
  assert.equal(done.stdout_tail, 'finished\n');
  // It ended after the gate opened: its runtime covers the time from its start (or run's answer, if that came later) to then.
  const from = Math.max(answeredAt, Date.parse(early.started_at));
  assert.ok(
    done.runtime_ms >= openedAt - from,
    `runtime ${done.runtime_ms} ms, gate opened ${openedAt - from} ms after the task started and run answered`,
  );
});

test('run with wait_seconds 0 answers a started task with its pid, or pending while it waits for a slot', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-running', '1'] });
  const tools = await connectClient(t, daemon.url);
  const first = await tools.call('run', { command: 'sleep 30', wait_seconds: 0 });
  assert.equal(first.structured.state, 'running');
  assert.ok(first.structured.pid > 0, `pid ${first.structured.pid}`);
  assert.notEqual(first.structured.started_at, null);
  assert.match(
    first.text,
    new RegExp(`^task ${first.structured.id} running: pid ${first.structured.pid}, running after`),
  );
  const second = await tools.call('run', { command: 'sleep 30', wait_seconds: 0 });
  assert.equal(second.structured.state, 'pending');
  assert.equal(second.structured.pid, null);
  assert.equal(second.text, `task ${second.structured.id} pending: waiting for a free slot`);
  await tools.ok('kill', { id: second.structured.id, force: true });
  await tools.ok('kill', { id: first.structured.id, force: true });
});

test('status with wait_seconds returns when the time passes if the task goes on', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'sleep 30', wait_seconds: 0 });
  const before = Date.now();
  const still = await tools.ok('status', { id: task.id, wait_seconds: 0.5 });
  const waited = Date.now() - before;
  assert.equal(still.state, 'running');
  assert.ok(waited >= 450, `waited ${waited} ms`);
  await tools.ok('kill', { id: task.id, force: true });
});

test('a name replaces the id, is refused while running and accepted again once finished', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const first = await tools.ok('run', { command: 'echo first; sleep 30', name: 'build-1', wait_seconds: 0 });
  assert.equal(first.id, 'build-1');
  assert.equal(first.name, 'build-1');
  const refused = await tools.error('run', { command: 'echo second', name: 'build-1' });
  assert.equal(
    refused,
    '"name" is taken: got "build-1", whose task is still running; choose another name, or wait for it to finish or kill it first',
  );
  await tools.ok('kill', { id: 'build-1', force: true });
  await tools.ok('status', { id: 'build-1', wait_seconds: 10 });
  const second = await tools.ok('run', { command: 'echo second', name: 'build-1' });
  assert.equal(second.state, 'done');
  assert.equal(second.stdout_tail, 'second\n', 'a reused name starts fresh files');
  const listed = await tools.ok('list', {});
  assert.equal(listed.tasks.filter((task: { id: string }) => task.id === 'build-1').length, 1);
});

test('of two concurrent runs with one name exactly one wins', async (t) => {
  const daemon = await startTestDaemon(t);
  const [a, b] = await Promise.all([connectClient(t, daemon.url), connectClient(t, daemon.url)]);
  for (let round = 0; round < 5; round++) {
    const name = `race-${round}`;
    const results = await Promise.all([
      a.call('run', { command: 'sleep 0.3', name, wait_seconds: 0 }),
      b.call('run', { command: 'sleep 0.3', name, wait_seconds: 0 }),
    ]);
    assert.equal(results.filter((result) => result.isError !== true).length, 1, `round ${round}`);
    assert.match(results.find((result) => result.isError)!.text, /"name" is taken/);
  }
});

test('generated ids never take an id already in the registry', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: 'sleep 30', name: 'task-2', wait_seconds: 0 });
  const one = await tools.ok('run', { command: 'true' });
  const two = await tools.ok('run', { command: 'true' });
  assert.equal(one.id, 'task-1');
  assert.equal(two.id, 'task-3');
  await tools.ok('kill', { id: 'task-2', force: true });
});

test('cwd, env and stdin reach the command, and stdin is /dev/null without stdin', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const where = await tools.ok('run', {
    command: 'pwd; echo "$GREETING"',
    cwd: '/usr/bin',
    env: { GREETING: 'hello there' },
  });
  assert.equal(where.stdout_tail, '/usr/bin\nhello there\n');
  const fed = await tools.ok('run', { command: 'cat; echo; wc -l', stdin: 'one\ntwo\n' });
  assert.equal(fed.stdout_tail, 'one\ntwo\n\n0\n');
  const prompt = await tools.ok('run', {
    command: 'read -p "continue? " answer; echo "got [$answer] status $?"',
    wait_seconds: 10,
  });
  assert.equal(prompt.state, 'done');
  assert.equal(prompt.stdout_tail, 'got [] status 1\n', 'a prompt gets end-of-file instead of hanging');
  const marker = await tools.ok('run', { command: 'echo "$HIVE_BASH_TASK_ID"', name: 'marked' });
  assert.equal(marker.stdout_tail, 'marked\n');
});

test('a failed spawn ends the task as done with its error and no exit code', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-running', '1'] });
  const tools = await connectClient(t, daemon.url);
  const dir = `${daemon.scratch}/vanishing`;
  mkdirSync(dir);
  // The only slot is taken, so the directory can vanish between run's check and the spawn.
  const blocker = await tools.ok('run', { command: 'sleep 1', wait_seconds: 0 });
  const task = await tools.ok('run', { command: 'echo never', cwd: dir, wait_seconds: 0 });
  assert.equal(task.state, 'pending');
  rmdirSync(dir);
  const ended = await tools.ok('status', { id: task.id, wait_seconds: 10 });
  assert.equal(ended.state, 'done');
  assert.equal(ended.exit_code, null);
  if (daemon.containment === 'node') assert.match(ended.error, /^spawn failed: spawn bash\b.*: ENOENT \(errno 2\)$/);
  else assert.equal(ended.error, `spawn failed: start hive-task-shim in ${dir}: ENOENT (errno 2)`);
  assert.equal((await tools.ok('status', { id: blocker.id })).state, 'done');
});

test('list shows the newest tasks first, filtered by state and limited', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: 'true', name: 'a' });
  await tools.ok('run', { command: 'false', name: 'b' });
  await tools.ok('run', { command: `sleep 30 # ${'x'.repeat(300)}`, name: 'c', wait_seconds: 0 });
  const all = await tools.ok('list', {});
  assert.deepEqual(
    all.tasks.map((task: { id: string }) => task.id),
    ['c', 'b', 'a'],
  );
  assert.equal(all.tasks[0].command.length, 200);
  assert.equal(all.tasks[1].exit_code, 1);
  const running = await tools.ok('list', { state: 'running' });
  assert.deepEqual(
    running.tasks.map((task: { id: string }) => task.id),
    ['c'],
  );
  const limited = await tools.ok('list', { limit: 1 });
  assert.equal(limited.tasks.length, 1);
  await tools.ok('kill', { id: 'c', force: true });
});

test('a command longer than the kernel allows one argument to be runs like any other', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const filler = `# ${'é'.repeat(100_000)}\n`; // 200 KB of comment: over the kernel's 128 KiB per argument
  const task = await tools.ok('run', {
    command: `${filler}echo "long $((6 * 7))"; echo "\${HIVE_BASH_COMMAND_PART_0:-unset}"`,
  });
  assert.equal(task.state, 'done');
  assert.equal(task.stdout_tail, 'long 42\nunset\n');
});
