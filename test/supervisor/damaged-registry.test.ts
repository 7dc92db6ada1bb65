import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const NOISE_BYTES = 4096;

/** Writes 4 KiB of random bytes into `file` at `offset`, as a failing disk or a stray write would. */
function writeNoise(file: string, offset: number): void {
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, randomBytes(NOISE_BYTES), 0, NOISE_BYTES, offset);
  } finally {
    closeSync(fd);
  }
}

/** A daemon that ran two tasks (one named, one with a generated id); returns it and their output files' contents. */
async function runTasks(t: TestContext): Promise<{ daemon: TestDaemon; outputs: Map<string, string> }> {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const named = await tools.ok('run', { command: 'echo named-output; echo named-error >&2', name: 'named' });
  const generated = await tools.ok('run', { command: 'echo generated-output' });
  assert.equal(generated.id, 'task-1');
  const outputs = new Map<string, string>();
  for (const path of [named.stdout_path, named.stderr_path, generated.stdout_path])
    outputs.set(path, readFileSync(path, 'utf8'));
  return { daemon, outputs };
}

/** Starts a daemon on the damaged state dir and checks everything the set-aside promises; returns the set-aside path. */
async function expectSetAside(
  t: TestContext,
  stateDir: string,
  outputs: Map<string, string>,
  reason: RegExp,
): Promise<string> {
  const daemon = await startTestDaemon(t, { stateDir });
  const health = (await (await fetch(`${daemon.origin}/healthz`)).json()) as any;
  assert.equal(health.ok, true);
  const registry = join(stateDir, 'tasks.sqlite');
  assert.match(
    health.registry.set_aside,
    new RegExp(`^${registry.replaceAll('.', '\\.')}\\.damaged-\\d{8}T\\d{6}\\.\\d{3}Z$`),
  );
  assert.match(health.registry.reason, reason);
  assert.ok(existsSync(health.registry.set_aside), 'the damaged registry is kept beside the fresh one');
  const logged = daemon
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
  const error = logged.find((line) => line.set_aside !== undefined);
  assert.equal(error?.level, 50, daemon.stderr());
  assert.equal(error.set_aside, health.registry.set_aside);
  assert.equal(error.reason, health.registry.reason);
  for (const [path, content] of outputs) assert.equal(readFileSync(path, 'utf8'), content, `${path} is untouched`);

  const tools = await connectClient(t, daemon.url);
  assert.match(
    await tools.error('status', { id: 'named' }),
    /"id" names no task/,
    'the fresh registry does not know the old tasks',
  );
  const fresh = await tools.ok('run', { command: 'echo fresh' });
  assert.equal(fresh.stdout_tail, 'fresh\n');
  assert.equal(fresh.id, 'task-2', 'a generated id does not reuse the output files of a forgotten task');
  for (const [path, content] of outputs)
    assert.equal(readFileSync(path, 'utf8'), content, `${path} is untouched by the new run`);
  assert.equal((await tools.ok('list', {})).tasks.length, 1);
  return health.registry.set_aside;
}

test('a registry damaged on disk is set aside at start, and the daemon serves with a fresh one', async (t) => {
  const { daemon, outputs } = await runTasks(t);
  assert.equal(((await (await fetch(`${daemon.origin}/healthz`)).json()) as any).registry, null);
  assert.equal(await daemon.stop(), 0);
  writeNoise(join(daemon.stateDir, 'tasks.sqlite'), 4096);
  await expectSetAside(t, daemon.stateDir, outputs, /^quick_check: \*\*\* in database main \*\*\* /);
});

test('a registry whose header is noise is set aside with the WAL and shared memory a crash left', async (t) => {
  const { daemon, outputs } = await runTasks(t);
  await daemon.crash();
  const registry = join(daemon.stateDir, 'tasks.sqlite');
  assert.ok(existsSync(`${registry}-wal`) && existsSync(`${registry}-shm`), 'a crash leaves the WAL and its index');
  // Noise over the WAL's header too: SQLite would read a sound copy of the first page from a sound WAL.
  writeNoise(registry, 0);
  writeNoise(`${registry}-wal`, 0);
  const aside = await expectSetAside(t, daemon.stateDir, outputs, /^file is not a database$/);
  assert.ok(
    existsSync(`${aside}-wal`) && existsSync(`${aside}-shm`),
    `beside it: ${readdirSync(daemon.stateDir).join(' ')}`,
  );
});
