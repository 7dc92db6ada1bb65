import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test('finished tasks beyond --retention-count are pruned oldest first, with their files', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--retention-count', '3'] });
  const tools = await connectClient(t, daemon.url);
  const long = await tools.ok('run', { command: 'sleep 60', name: 'keeper', wait_seconds: 0 });
  const finished = [];
  for (let i = 1; i <= 5; i++) finished.push(await tools.ok('run', { command: `echo ${i}`, name: `t${i}` }));
  const listed = await tools.ok('list', {});
  assert.deepEqual(
    listed.tasks.map((task: { id: string }) => task.id),
    ['t5', 't4', 't3', 'keeper'],
  );
  for (const task of finished.slice(0, 2)) {
    assert.equal(existsSync(task.stdout_path), false, `${task.id}'s output was removed`);
    assert.match(await tools.error('status', { id: task.id }), /"id" names no task/);
  }
  assert.equal(existsSync(finished[4].stdout_path), true);
  assert.equal((await tools.ok('status', { id: long.id })).state, 'running', 'running tasks are never pruned');
  await tools.ok('kill', { id: long.id, force: true });
});

test('rerunning a name replaces its finished task without pruning others', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--retention-count', '3'] });
  const tools = await connectClient(t, daemon.url);
  for (const name of ['t1', 't2', 't3']) await tools.ok('run', { command: `echo ${name}`, name });
  for (let i = 0; i < 5; i++)
    assert.equal((await tools.ok('run', { command: `echo again ${i}`, name: 't3' })).state, 'done');
  const listed = await tools.ok('list', {});
  assert.deepEqual(
    listed.tasks.map((task: { id: string }) => task.id),
    ['t3', 't2', 't1'],
  );
});

test('finished tasks older than --retention-days are pruned at start', async (t) => {
  const first = await startTestDaemon(t);
  const tools = await connectClient(t, first.url);
  const old = await tools.ok('run', { command: 'echo old', name: 'old' });
  await first.stop();
  // 0.00001 days is under a second: by the time the next daemon starts, the task is older.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const second = await startTestDaemon(t, { stateDir: first.stateDir, args: ['--retention-days', '0.00001'] });
  const again = await connectClient(t, second.url);
  assert.match(await again.error('status', { id: 'old' }), /"id" names no task/);
  assert.equal(existsSync(old.stdout_path), false);
});

/** What the daemon's output folder holds, by name. */
const outputNames = (stateDir: string): string[] => readdirSync(join(stateDir, 'harness', 'bash-tasks')).sort();

/** The inodes of a task's two files. */
const inodesOf = (task: { stdout_path: string; stderr_path: string }): number[] => [
  statSync(task.stdout_path).ino,
  statSync(task.stderr_path).ino,
];

test("a pruned task's files are deleted, and a later task's files are created new", async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--retention-count', '1'] });
  const tools = await connectClient(t, daemon.url);
  const first = await tools.ok('run', { command: 'echo first-secret; echo first-err >&2', name: 'first' });
  await tools.ok('run', { command: 'echo second', name: 'second' });
  // first was pruned at second's end: nothing of it is left, under its name or another.
  assert.deepEqual(outputNames(daemon.stateDir), ['second.err', 'second.out']);
  const third = await tools.ok('run', { command: 'echo third; echo third-err >&2', name: 'third' });
  assert.deepEqual(outputNames(daemon.stateDir), ['third.err', 'third.out']);
  assert.equal(readFileSync(third.stdout_path, 'utf8'), 'third\n');
  assert.equal(readFileSync(third.stderr_path, 'utf8'), 'third-err\n');
  assert.equal(statSync(third.stdout_path).mode & 0o777, 0o600);
  assert.equal(statSync(third.stderr_path).mode & 0o777, 0o600);
  assert.equal(existsSync(first.stdout_path), false);
});

test('a pruned task whose lingering processes still write its output has its files deleted, not reused', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--retention-count', '1'] });
  const tools = await connectClient(t, daemon.url);
  // The background sleep keeps the task's stdout open: done, with a lingering process its shim waits for.
  const lingering = await tools.ok('run', { command: 'sleep 600 & echo started', name: 'lingering' });
  assert.equal(lingering.state, 'done');
  assert.equal(lingering.lingering, 1);
  const inodes = inodesOf(lingering);
  await tools.ok('run', { command: 'echo next', name: 'next' });
  assert.equal(existsSync(lingering.stdout_path), false, 'pruned');
  assert.deepEqual(outputNames(daemon.stateDir), ['next.err', 'next.out'], 'nothing of it is kept');
  const later = await tools.ok('run', { command: 'echo later', name: 'later' });
  assert.ok(!inodes.includes(statSync(later.stdout_path).ino));
});
