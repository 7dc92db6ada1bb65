import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { createInterface } from 'node:readline';
import {
  cleanEnv,
  DAEMON_NODE_FLAGS,
  MAIN_JS,
  runDaemonBinary,
  startTestDaemon,
  type TestDaemon,
} from '../helpers/daemon.js';
import { daemonFolderName } from '../../src/process/cgroups.js';
import { removeDaemonV1Folders } from '../helpers/cgroups.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

function makeStateDir(t: TestContext): string {
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-lock-'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  return stateDir;
}

/** Field 22 of /proc/PID/stat: the process's start time in clock ticks after boot. */
function startTimeOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
}

/** A `sleep` of the test's own, holding `file` open (as its stdin) when given; killed when the test ends. */
async function startSleep(t: TestContext, file?: string): Promise<ChildProcess> {
  let stdin: number | 'ignore' = 'ignore';
  if (file !== undefined) {
    if (!existsSync(file)) writeFileSync(file, '');
    stdin = openSync(file, 'r');
  }
  const child = spawn('sleep', ['1000'], { stdio: [stdin, 'ignore', 'ignore'] });
  if (typeof stdin === 'number') closeSync(stdin);
  await once(child, 'spawn');
  t.after(() => child.kill('SIGKILL'));
  return child;
}

const pidFile = (stateDir: string) => join(stateDir, 'daemon.pid');

/**
 * SIGTERM once the daemon has answered a request: main.ts prints its URL before it installs its
 * signal handlers, so a SIGTERM sent the moment the line is read can find the default action.
 */
async function stopServing(daemon: TestDaemon): Promise<number | null> {
  assert.equal((await fetch(`${daemon.origin}/healthz`)).status, 200);
  return daemon.stop();
}

test('daemon.pid holds the pid and start time of the daemon, mode 0600, and a clean stop removes it', async (t) => {
  const daemon = await startTestDaemon(t);
  const pid = daemon.child.pid!;
  assert.equal(readFileSync(pidFile(daemon.stateDir), 'utf8'), `${pid} ${startTimeOf(pid)}\n`);
  assert.equal(statSync(pidFile(daemon.stateDir)).mode & 0o777, 0o600);
  assert.equal(await stopServing(daemon), 0);
  assert.equal(existsSync(pidFile(daemon.stateDir)), false);
});

test('a stop leaves alone a daemon.pid that is no longer its own', async (t) => {
  const daemon = await startTestDaemon(t);
  writeFileSync(`${pidFile(daemon.stateDir)}.other`, 'someone else\n');
  renameSync(`${pidFile(daemon.stateDir)}.other`, pidFile(daemon.stateDir));
  assert.equal(await stopServing(daemon), 0);
  assert.equal(readFileSync(pidFile(daemon.stateDir), 'utf8'), 'someone else\n');
});

test('a process that holds the registry open with the recorded start time holds the state dir, whatever its name', async (t) => {
  const stateDir = makeStateDir(t);
  const holder = await startSleep(t, join(stateDir, 'tasks.sqlite'));
  for (const record of [`${holder.pid} ${startTimeOf(holder.pid!)}\n`, `${holder.pid}\n`]) {
    writeFileSync(pidFile(stateDir), record);
    const refused = await runDaemonBinary(['--port', '0', '--state-dir', stateDir, '--containment', 'process-group']);
    assert.equal(refused.code, 2, `with daemon.pid ${JSON.stringify(record)}: ${refused.stderr}`);
    assert.match(
      refused.stderr,
      new RegExp(
        `another hive-bash-daemon \\(pid ${holder.pid}\\) uses the state directory ${stateDir}; stop it or choose another --state-dir`,
      ),
    );
    assert.equal(readFileSync(pidFile(stateDir), 'utf8'), record, 'the holder keeps its file');
  }
});

test('a daemon.pid whose pid was reused by another process (its start time differs) is taken over', async (t) => {
  const stateDir = makeStateDir(t);
  const reused = await startSleep(t, join(stateDir, 'tasks.sqlite'));
  writeFileSync(pidFile(stateDir), `${reused.pid} ${startTimeOf(reused.pid!) + 1}\n`);
  await expectTakenOver(t, stateDir);
});

test('a daemon.pid naming a live process that is not a daemon of this state dir is taken over', async (t) => {
  const sleeper = await startSleep(t);
  for (const pid of [sleeper.pid!, 1]) {
    const stateDir = makeStateDir(t);
    writeFileSync(pidFile(stateDir), `${pid} ${startTimeOf(pid)}\n`);
    await expectTakenOver(t, stateDir);
  }
});

test('a daemon.pid that is empty or garbage is taken over', async (t) => {
  for (const garbage of [Buffer.alloc(0), randomBytes(64), Buffer.from('12 34 56\n')]) {
    const stateDir = makeStateDir(t);
    writeFileSync(pidFile(stateDir), garbage);
    await expectTakenOver(t, stateDir);
  }
});

test('the daemon.pid of a live daemon of another state dir does not block this one', async (t) => {
  const other = await startTestDaemon(t);
  const stateDir = makeStateDir(t);
  writeFileSync(pidFile(stateDir), readFileSync(pidFile(other.stateDir)));
  await expectTakenOver(t, stateDir);
  assert.equal(other.child.exitCode, null, 'the other daemon goes on');
  assert.ok(existsSync(pidFile(other.stateDir)), 'and keeps its own daemon.pid');
});

test('daemons started at once on a state dir with a stale daemon.pid end with exactly one holder', async (t) => {
  const RACERS = 4;
  for (let round = 0; round < 3; round++) {
    const stateDir = makeStateDir(t);
    writeFileSync(pidFile(stateDir), 'stale\n');
    const args = ['--port', '0', '--state-dir', stateDir, '--containment', 'process-group', '--log-level', 'warn'];
    const racers = await Promise.all(Array.from({ length: RACERS }, () => startRacer(t, args)));
    const winners = racers.filter((racer) => racer.code === null);
    assert.equal(winners.length, 1, `round ${round}: ${winners.length} daemons serve one state dir`);
    const winner = winners[0]!.child;
    assert.equal(readFileSync(pidFile(stateDir), 'utf8'), `${winner.pid} ${startTimeOf(winner.pid!)}\n`);
    for (const loser of racers.filter((racer) => racer !== winners[0])) {
      assert.equal(loser.code, 2, loser.stderr());
      assert.match(
        loser.stderr(),
        new RegExp(`another hive-bash-daemon \\(pid ${winner.pid}\\) uses the state directory ${stateDir}`),
      );
    }
    winner.kill('SIGTERM');
    await once(winner, 'close');
  }
});

test('a start waits for another start deciding at the same moment, and not for the draft of a dead one', async (t) => {
  const stateDir = makeStateDir(t);
  writeFileSync(join(stateDir, 'daemon.pid.new-999999999'), 'left by a start that died\n');
  // Another start: its draft, named by its pid and held open by it.
  const deciding = await startSleep(t, join(stateDir, 'draft'));
  renameSync(join(stateDir, 'draft'), join(stateDir, `daemon.pid.new-${deciding.pid}`));
  const starting = startRacer(t, [
    '--port',
    '0',
    '--state-dir',
    stateDir,
    '--containment',
    'process-group',
    '--log-level',
    'warn',
  ]);
  assert.ok(await waitFor(() => existsSync(pidFile(stateDir))), 'the start links its daemon.pid');
  const linked = readFileSync(pidFile(stateDir), 'utf8');
  const pid = Number(linked.split(' ')[0]);
  assert.ok(existsSync(join(stateDir, `daemon.pid.new-${pid}`)), 'and is still deciding: its draft is there');
  deciding.kill('SIGKILL');
  const { child, code } = await starting;
  assert.equal(code, null, 'it serves once the other start is gone');
  assert.equal(linked, `${child.pid} ${startTimeOf(child.pid!)}\n`);
  assert.equal(existsSync(join(stateDir, `daemon.pid.new-${pid}`)), false);
});

/** Starts the daemon binary; resolves once it listens (code null) or has exited (its exit code). */
async function startRacer(
  t: TestContext,
  args: string[],
): Promise<{ child: ChildProcess; code: number | null; stderr: () => string }> {
  const child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, MAIN_JS, ...args], {
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const folder = daemonFolderName(args[args.indexOf('--state-dir') + 1]!);
  t.after(async () => {
    child.kill('SIGKILL');
    await removeDaemonV1Folders(folder); // its cpu folder's removal waits for it to be gone
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const listening = new Promise<null>((resolve) =>
    createInterface({ input: child.stdout }).on('line', (line) => line.startsWith('listening on ') && resolve(null)),
  );
  const closed = once(child, 'close').then(([code]) => code as number | null);
  return { child, code: await Promise.race([listening, closed]), stderr: () => stderr };
}

/** A daemon started on `stateDir` serves, runs a task, and its daemon.pid names it. */
async function expectTakenOver(t: TestContext, stateDir: string): Promise<void> {
  const daemon = await startTestDaemon(t, { stateDir });
  const pid = daemon.child.pid!;
  assert.equal(readFileSync(pidFile(stateDir), 'utf8'), `${pid} ${startTimeOf(pid)}\n`);
  const tools = await connectClient(t, daemon.url);
  assert.equal((await tools.ok('run', { command: 'echo served' })).stdout_tail, 'served\n');
  assert.equal(await daemon.stop(), 0);
}
