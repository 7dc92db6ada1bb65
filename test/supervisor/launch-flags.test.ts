// The V8 flags of the linear-time regexp engine are given at launch, before any code runs (Node
// takes them only on its command line): the daemon checks they are in force and refuses to start
// without them, and each way of starting it (the bin's shebang, npm start, CI's conformance run,
// the nix wrapper in test/nix/package.test.ts) passes them.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { REGEXP_ENGINE_FLAGS } from '../../src/supervisor/readiness/wait-pattern.js';
import { HEAP_FLAGS } from '../../src/supervisor/heap-flags.js';
import { daemonFolderName } from '../../src/process/cgroups.js';
import { removeDaemonV1Folders } from '../helpers/cgroups.js';
import { cleanEnv, MAIN_JS, readListeningUrl, runDaemonBinary } from '../helpers/daemon.js';
import { REPO_ROOT } from '../helpers/nix-module.js';

const [ENGINE, FALLBACK] = REGEXP_ENGINE_FLAGS;
const FLAGS = REGEXP_ENGINE_FLAGS.join(' ');
/** What the bin and npm start give Node: the engine's flags and the heap's bounds. */
const LAUNCH_FLAGS = [...REGEXP_ENGINE_FLAGS, ...HEAP_FLAGS].join(' ');
/** Node's directory first on PATH: `node` in a shebang or a script is the Node running the suite. */
const PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-flags-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('started without the flags, the daemon refuses to start and says which flags to pass', async (t) => {
  const cases: [string, string[], RegExp][] = [
    ['neither', [], /the RegExp flag 'l' is refused \(--enable-experimental-regexp-engine is not set\)/],
    [`only ${FALLBACK}`, [FALLBACK], /the RegExp flag 'l' is refused/],
    [
      `only ${ENGINE}`,
      [ENGINE],
      /\/\(a\+\)\+\$\/ .* still ran after 1000 ms \(--enable-[a-z-]+-on-excessive-backtracks is not set\)/,
    ],
  ];
  for (const [name, flags, reason] of cases) {
    await t.test(name, async () => {
      const stateDir = join(scratch(t), 'state');
      const result = await runDaemonBinary(
        ['--port', '0', '--state-dir', stateDir, '--containment', 'process-group'],
        {},
        flags,
      );
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stdout, '', 'it never listened');
      assert.match(result.stderr, /^hive-bash-daemon: V8's linear-time regexp engine is off: /);
      assert.match(result.stderr, reason);
      assert.ok(result.stderr.includes(`start it as \`node ${FLAGS} ${MAIN_JS} ...\``), result.stderr);
      assert.equal(existsSync(stateDir), false, 'it touched nothing: the state dir was never made');
    });
  }
  await t.test('--help needs no flags', async () => {
    const help = await runDaemonBinary(['--help'], {}, []);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: hive-bash-daemon/);
  });
});

/** Spawns `command` in a process group of its own (killed whole at the end) and resolves once the daemon listens. */
async function startListening(t: TestContext, command: string, args: string[], cwd?: string): Promise<ChildProcess> {
  const child = spawn(command, args, {
    cwd,
    detached: true,
    env: { ...cleanEnv(), PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const started: { folder?: string } = {};
  t.after(async () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    if (started.folder !== undefined) await removeDaemonV1Folders(started.folder);
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  await readListeningUrl(child, () => stderr);
  started.folder = daemonFolderName(args[args.indexOf('--state-dir') + 1]!);
  return child;
}

test('the hive-bash-daemon command, as npm links it (a symlink to the file), passes the flags in its shebang', async (t) => {
  const firstLine = readFileSync(MAIN_JS, 'utf8').split('\n', 1)[0]!;
  assert.equal(firstLine, `#!/usr/bin/env -S node ${LAUNCH_FLAGS}`);
  // Linux cuts a shebang at 255 bytes (127 before 5.1; the daemon needs 5.3's pidfd_open anyway).
  assert.ok(Buffer.byteLength(firstLine) < 256, `${Buffer.byteLength(firstLine)} bytes`);
  const bin = join(scratch(t), 'hive-bash-daemon');
  symlinkSync(MAIN_JS, bin);
  chmodSync(MAIN_JS, statSync(MAIN_JS).mode | 0o111); // what npm's bin-links does to a bin's file
  const stateDir = join(scratch(t), 'state');
  await startListening(t, bin, ['--port', '0', '--state-dir', stateDir, '--containment', 'process-group']);
});

test('npm start passes the flags', async (t) => {
  const scripts = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts;
  assert.equal(scripts.start, `node ${LAUNCH_FLAGS} dist/src/supervisor/main.js`);
  const stateDir = join(scratch(t), 'state');
  const args = ['start', '--silent', '--', '--port', '0', '--state-dir', stateDir, '--containment', 'process-group'];
  await startListening(t, 'npm', args, REPO_ROOT);
});

test("CI's conformance run starts the daemon with the flags", () => {
  const script = readFileSync(join(REPO_ROOT, '.ci/conformance'), 'utf8');
  assert.match(script, new RegExp(`^node ${FLAGS} dist/src/supervisor/main\\.js `, 'm'));
});
