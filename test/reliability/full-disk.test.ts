// The state dir on a small tmpfs that fills and empties again: output stops short of the last of the
// disk, a registry write the disk refuses is held (run refused with the reason, tasks going on), and
// everything recovers without a restart, the registry intact. A task that fills a 3 MB disk by
// itself is cut at the reserve and its end written; an end held in memory at a stop is written
// there, from the reserve file the daemon gives up, so that a restart does not make it interrupted;
// without that file the stop names the task whose end is lost.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

const MOUNT_MB = 24;

/** A tmpfs of `megabytes` (and `inodes`) mounted for this test, unmounted (lazily, whatever still holds it) at its end. */
function mountSmallDisk(t: { after(fn: () => void): void }, megabytes = MOUNT_MB, inodes?: number): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-full-disk-'));
  const options = `size=${megabytes}m${inodes === undefined ? '' : `,nr_inodes=${inodes}`}`;
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir]);
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  t.after(() => {
    spawnSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** What a test on a small disk cannot do without root. */
const NO_TMPFS = 'no tmpfs can be mounted here (it needs root)';

/**
 * A daemon on a state dir on a small disk of `megabytes` (and `inodes`: mountSmallDisk), and a
 * client of it; null where no disk can be mounted.
 */
async function startOnSmallDisk(t: TestContext, megabytes = MOUNT_MB, inodes?: number) {
  const disk = mountSmallDisk(t, megabytes, inodes);
  if (disk === null) return null;
  const stateDir = join(disk, 'state');
  mkdirSync(stateDir);
  const daemon = await startTestDaemon(t, { stateDir });
  return { disk, stateDir, daemon, tools: await connectClient(t, daemon.url) };
}

/** The disk fills from outside, the registry's write-ahead log emptied first, so that its next write must take new space. */
function fillFromOutside(disk: string, stateDir: string): void {
  const outside = new Database(join(stateDir, 'tasks.sqlite'));
  outside.pragma('wal_checkpoint(TRUNCATE)');
  outside.close();
  spawnSync('dd', ['if=/dev/zero', `of=${join(disk, 'filler')}`, 'bs=1M'], { stdio: 'ignore' });
}

/** Starts task `held`, which prints `finished` once the gate it returns is there. */
async function runHeldTask(tools: ToolClient, disk: string): Promise<string> {
  const gate = join(disk, 'gate');
  await tools.ok('run', {
    command: `while [ ! -e ${gate} ]; do sleep 0.02; done; echo finished`,
    name: 'held',
    wait_seconds: 0,
  });
  return gate;
}

/** Task `id`'s state and exit code as a new daemon on `stateDir` has them. */
async function afterRestart(t: TestContext, stateDir: string, id: string): Promise<unknown[]> {
  const daemon = await startTestDaemon(t, { stateDir });
  const status = await (await connectClient(t, daemon.url)).ok('status', { id, peek: true });
  return [status.state, status.exit_code];
}

test('a state dir that fills and empties again: nothing lost, the daemon serving throughout', async (t) => {
  const small = await startOnSmallDisk(t);
  if (small === null) return t.skip(NO_TMPFS);
  const { disk, stateDir, daemon, tools } = small;
  const gate = await runHeldTask(tools, disk);

  // Output stops while less than the reserve is free: the registry keeps room to write.
  const flood = await tools.ok('run', { command: 'head -c 40M /dev/zero', name: 'flood', wait_seconds: 30 });
  assert.deepEqual([flood.state, flood.exit_code, flood.stdout_truncated], ['done', 0, true]);
  assert.match(
    flood.stdout_truncated_reason,
    /^the disk of .* is nearly full: output stops while less than its reserve is free/,
  );
  assert.ok(flood.stdout_bytes < MOUNT_MB * 1024 * 1024, `kept ${flood.stdout_bytes} bytes`);

  // Then the disk fills from outside.
  fillFromOutside(disk, stateDir);

  const refused = await tools.call('run', { command: 'true' });
  assert.equal(refused.isError, true, 'run is refused while the registry cannot be written');
  assert.equal(refused.structured.error.code, 'ERR_STATE_DIR_FULL');
  assert.match(
    refused.text,
    new RegExp(
      `^the state dir ${stateDir} cannot be written now \\(.*database or disk is full; \\d+ bytes free\\); nothing was started`,
    ),
  );

  writeFileSync(gate, ''); // an inode, no data: a full tmpfs still takes it
  const ended = await tools.statusWhen(
    'held',
    (view) => view.state === 'done',
    'the task went on and its end is known',
    30_000,
    {
      peek: true,
    },
  );
  assert.deepEqual(
    [ended.exit_code, ended.stdout_truncated],
    [0, true],
    'its output could not be written, and says so',
  );
  assert.match(ended.stdout_truncated_reason, /nearly full|ENOSPC/);
  const degraded = (await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as any;
  assert.deepEqual([degraded.ok, degraded.state_dir.writable], [false, false]);
  assert.ok(degraded.state_dir.held_writes >= 1, `held writes: ${degraded.state_dir.held_writes}`);
  assert.match(degraded.state_dir.fault, /database or disk is full/);

  // The operator frees space: the filler, and the flood's output.
  rmSync(join(disk, 'filler'));
  rmSync(flood.stdout_path);
  assert.ok(
    await waitFor(
      async () => ((await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as any).ok === true,
      30_000,
    ),
    'the daemon recovered by itself',
  );
  assert.equal((await tools.ok('run', { command: 'echo back' })).stdout_tail, 'back\n');
  assert.equal(await daemon.stop(), 0);

  const registry = new Database(join(stateDir, 'tasks.sqlite'), { readonly: true });
  try {
    assert.equal(registry.pragma('integrity_check', { simple: true }), 'ok');
    const row = registry
      .prepare<[string], { state: string; exit_code: number }>('SELECT state, exit_code FROM tasks WHERE id = ?')
      .get('held');
    assert.deepEqual(row, { state: 'done', exit_code: 0 }, 'the end held in memory was written once the disk took it');
  } finally {
    registry.close();
  }
  execFileSync('sync');
});

test('a state disk out of inodes, with bytes to spare: run is refused with ERR_STATE_DIR_FULL and /healthz says why, until some are freed', async (t) => {
  const small = await startOnSmallDisk(t, MOUNT_MB, 256);
  if (small === null) return t.skip(NO_TMPFS);
  const { disk, daemon, tools } = small;
  assert.equal((await tools.ok('run', { command: 'echo before', name: 'before', wait_seconds: 30 })).exit_code, 0);
  // Something else on the disk takes its last inode (a task writing where it shares the disk).
  const fillers = join(disk, 'fillers');
  mkdirSync(fillers);
  for (let i = 0; ; i++) {
    try {
      writeFileSync(join(fillers, String(i)), '');
    } catch (error) {
      assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
      break;
    }
  }
  // Before, the run was recorded and answered done, its error ENOSPC opening its output file.
  const refused = await tools.call('run', { command: 'echo after', name: 'after' });
  assert.equal(refused.structured.error?.code, 'ERR_STATE_DIR_FULL', refused.text);
  assert.match(
    refused.text,
    /^the state dir .* cannot be written now \(no inode is free on its file system \(0 of \d+, df -i .*\), and a task's output is two files; \d+ bytes free\); nothing was started/,
  );
  assert.match(await tools.error('status', { id: 'after' }), /no task/);
  const degraded = (await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as any;
  assert.deepEqual([degraded.ok, degraded.state_dir.writable], [false, false]);
  assert.match(degraded.state_dir.fault, /no inode is free/);
  assert.equal((await tools.ok('status', { id: 'before' })).state, 'done', 'the daemon goes on serving');

  rmSync(fillers, { recursive: true });
  assert.equal((await tools.ok('run', { command: 'echo after', name: 'after', wait_seconds: 30 })).exit_code, 0);
  const healthy = (await fetch(`${daemon.origin}/healthz`).then((res) => res.json())) as any;
  assert.deepEqual([healthy.ok, healthy.state_dir.writable, healthy.state_dir.fault], [true, true, null]);
});

test('a task that fills a 3 MB state disk: its output stops short, and its end survives a restart', async (t) => {
  const small = await startOnSmallDisk(t, 3);
  if (small === null) return t.skip(NO_TMPFS);
  const { stateDir, daemon: first, tools } = small;
  const command = 'head -c 10M /dev/urandom | base64; echo done >&2';
  const ended = await tools.ok('run', { command, name: 'filler', wait_seconds: 30 });
  assert.deepEqual([ended.state, ended.exit_code], ['done', 0]);
  assert.match(ended.stdout_truncated_reason, /is nearly full: output stops while less than its reserve is free/);
  const health = (await fetch(`${first.origin}/healthz`).then((res) => res.json())) as any;
  assert.deepEqual([health.state_dir.held_writes, health.state_dir.writable], [0, true], JSON.stringify(health));
  assert.equal(await first.stop(), 0);

  assert.deepEqual(await afterRestart(t, stateDir, 'filler'), ['done', 0], 'the end was not lost at the restart');
});

for (const reserve of [true, false])
  test(`a task end held in memory when the daemon stops is ${reserve ? 'written from its reserve' : 'named as lost without one'}`, async (t) => {
    const small = await startOnSmallDisk(t);
    if (small === null) return t.skip(NO_TMPFS);
    const { disk, stateDir, daemon: first, tools } = small;
    const gate = await runHeldTask(tools, disk);
    if (!reserve) rmSync(join(stateDir, 'registry-reserve'));
    fillFromOutside(disk, stateDir); // then the task ends
    writeFileSync(gate, '');
    const health = async () => (await fetch(`${first.origin}/healthz`).then((res) => res.json())) as any;
    assert.ok(await waitFor(async () => (await health()).state_dir.held_writes >= 1, 30_000), 'its end is held');
    assert.equal(await first.stop(), 0);
    if (reserve) assert.match(first.stderr(), /the state dir was full at the stop: .*registry-reserve was given up/);
    else
      assert.match(
        first.stderr(),
        /"tasks":\["held"\].*"msg":"the state dir refused the held registry writes at the stop: the ends of these tasks are lost/,
      );

    rmSync(join(disk, 'filler'));
    const end = reserve ? ['done', 0] : ['interrupted', null];
    assert.deepEqual(await afterRestart(t, stateDir, 'held'), end, 'the end was written at the stop, or said lost');
  });

test('a daemon killed on a full state disk starts again, in the room of its reserve', async (t) => {
  const small = await startOnSmallDisk(t);
  if (small === null) return t.skip(NO_TMPFS);
  const { disk, stateDir, daemon: first, tools } = small;
  await tools.ok('run', { command: 'sleep 600', name: 'asleep', wait_seconds: 0 });
  fillFromOutside(disk, stateDir);
  await first.crash();
  const again = await startTestDaemon(t, { stateDir });
  assert.match(again.stderr(), /the state dir was full at the start: .*registry-reserve was given up to start/);
  const view = await (await connectClient(t, again.url)).ok('status', { id: 'asleep' });
  assert.equal(view.state, 'interrupted');
});
