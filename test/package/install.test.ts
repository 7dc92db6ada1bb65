// The package as a user gets it: `npm pack` of this project, installed globally into a fresh prefix
// (its native parts built there from the sources it ships), then the installed daemon's --version
// and a task run through the installed CLI. Then its native parts are broken one at a time: each
// time the daemon says in one line which part, why, and how to rebuild it, and exits 1.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { readListeningUrl } from '../helpers/daemon.js';
import { killMarkedProcesses } from '../helpers/processes.js';

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
const SCRIPTED = ['hive-bash-daemon', 'better-sqlite3', 'node-pty'];

/** What npm test sets for its own script (the project's prefix among them), not for an install elsewhere. */
const NPM_RUN_VARIABLES = /^npm_(lifecycle_|package_|command$|config_(local_|global_)?prefix$)/;

/** The runner's environment (npm's configuration too: CI's nodedir) without npm test's own or the daemon's. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !NPM_RUN_VARIABLES.test(name) && !name.startsWith('HIVE_')) env[name] = value;
  // The bins' shebang finds node on PATH: this test's own.
  return { ...env, PATH: `${dirname(process.execPath)}:${env.PATH ?? ''}`, ...extra };
}

const npm = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  run('npm', args, { cwd, env: cleanEnv(env), maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 });

/**
 * better-sqlite3's install downloads a prebuilt addon from GitHub, else compiles SQLite (most of
 * this test's time, 60 s of CPU here). Where GitHub cannot be reached, as here and in CI, it is
 * given this checkout's own build as a local prebuild (prebuild-install's documented
 * `<package>_local_prebuilds` setting), which it takes when the version npm installs is this one.
 */
async function localPrebuilds(dir: string): Promise<Record<string, string>> {
  const own = join(ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(own, 'package.json'), 'utf8')) as { version: string };
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-linux-${process.arch}.tar.gz`;
  await run('tar', ['-czf', join(prebuilds, name), '-C', own, 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: prebuilds };
}

/** Runs an installed bin to its end. */
async function runBin(path: string, args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(path, args, { env: cleanEnv(env), timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Node 22's NODE_MODULE_VERSION, or Node 20's under Node 22: another Node's. */
const FOREIGN_VERSION = process.versions.modules === '127' ? 115 : 127;

/** Compiles an addon that registers itself for another Node (FOREIGN_VERSION). */
async function buildForeignAddon(dir: string): Promise<string> {
  const source = join(dir, 'foreign.c');
  writeFileSync(
    source,
    `struct node_module { int nm_version; unsigned nm_flags; void *nm_dso_handle; const char *nm_filename;
  void *nm_register_func; void *nm_context_register_func; const char *nm_modname; void *nm_priv; void *nm_link; };
extern void node_module_register(void *);
static struct node_module module = { ${FOREIGN_VERSION}, 0, 0, "foreign.c", 0, 0, "foreign", 0, 0 };
__attribute__((constructor)) static void register_module(void) { node_module_register(&module); }
`,
  );
  const addon = join(dir, 'foreign.node');
  await run('cc', ['-shared', '-fPIC', '-o', addon, source]);
  return addon;
}

test(
  'the packed package installs into a fresh prefix, builds its native parts and runs a task',
  { timeout: 20 * 60_000 },
  async (t: TestContext) => {
    try {
      await npm(['ping'], ROOT);
    } catch (error) {
      return t.skip(`the npm registry is unreachable (npm ping: ${(error as Error).message.split('\n')[0]})`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'hive-bash-install-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));

    // dist is built by npm test (npm run build) before the tests run: no prepare here.
    const packed = JSON.parse(
      (await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dir], ROOT)).stdout,
    );
    const files: string[] = packed[0].files.map((file: { path: string }) => file.path);
    assert.deepEqual(
      files.filter((path) => path.startsWith('native/build')),
      [],
      'no build of this machine ships',
    );
    for (const path of ['native/binding.gyp', 'native/src/addon.c', 'native/src/shim.c', 'dist/src/supervisor/main.js'])
      assert.ok(files.includes(path), path);

    const prefix = join(dir, 'prefix');
    const started = Date.now();
    await npm(
      [
        'install',
        '-g',
        '--prefix',
        prefix,
        `--allow-scripts=${SCRIPTED.join(',')}`,
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        join(dir, packed[0].filename),
      ],
      dir,
      await localPrebuilds(dir),
    );
    t.diagnostic(`npm install -g of the tarball took ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const bin = (name: string) => join(prefix, 'bin', name);
    const version = await runBin(bin('hive-bash-daemon'), ['--version']);
    assert.deepEqual(version, { code: 0, stdout: `${packed[0].version}\n`, stderr: '' });

    // The installed daemon runs a task for the installed CLI.
    const marker = `hive-bash-install-${process.pid}`;
    const daemon = spawn(
      bin('hive-bash-daemon'),
      ['--port', '0', '--state-dir', join(dir, 'state'), '--containment', 'process-group', '--log-level', 'warn'],
      {
        env: cleanEnv({ HIVE_TEST_MARK: marker }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    daemon.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const exited = once(daemon, 'exit');
    t.after(async () => {
      if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
      await killMarkedProcesses(`HIVE_TEST_MARK=${marker}`);
    });
    const url = await readListeningUrl(daemon, () => stderr);
    const ran = await runBin(bin('hive-bash'), ['run', '--', 'echo', 'installed'], { HIVE_BASH_URL: url });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /^task-1\ndone: exit 0 after \S+\n--- stdout ---\ninstalled\n$/);
    daemon.kill('SIGTERM');
    assert.deepEqual(await exited, [0, null], stderr);

    // A broken install is told in one line: which part, why, and the command that rebuilds it.
    const packageDir = join(prefix, 'lib', 'node_modules', 'hive-bash-daemon');
    const release = join(packageDir, 'native', 'build', 'Release');
    const foreign = await buildForeignAddon(dir);
    const rebuildOwn = `npm rebuild --prefix ${join(prefix, 'lib')} hive-bash-daemon (it needs python3, make and g++)`;
    const cases: Array<{ path: string; replacement: string | null; says: string }> = [
      {
        path: join(release, 'hive_native.node'),
        replacement: null,
        says: `the native addon ${join(release, 'hive_native.node')} is not built; rebuild it with: ${rebuildOwn}`,
      },
      {
        path: join(release, 'hive_native.node'),
        replacement: foreign,
        says: `the native addon ${join(release, 'hive_native.node')} was built for another Node (NODE_MODULE_VERSION ${FOREIGN_VERSION}; this Node ${process.version} needs ${process.versions.modules}); rebuild it with: ${rebuildOwn}`,
      },
      {
        path: join(release, 'hive-task-shim'),
        replacement: null,
        says: `the executable ${join(release, 'hive-task-shim')} is not built; rebuild it with: ${rebuildOwn}`,
      },
      {
        path: join(packageDir, 'node_modules', 'better-sqlite3', 'build'),
        replacement: null,
        says: `better-sqlite3's addon is not built; rebuild it with: npm rebuild --prefix ${packageDir} better-sqlite3 (it needs python3, make and g++)`,
      },
    ];
    for (const { path, replacement, says } of cases) {
      renameSync(path, `${path}.aside`);
      if (replacement !== null) renameSync(replacement, path);
      const broken = await runBin(bin('hive-bash-daemon'), ['--port', '0', '--state-dir', join(dir, 'state')]);
      if (replacement !== null) renameSync(path, replacement);
      renameSync(`${path}.aside`, path);
      assert.deepEqual(broken, { code: 1, stdout: '', stderr: `hive-bash-daemon: broken install: ${says}\n` });
    }
  },
);
