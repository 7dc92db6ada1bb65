// The package as a user gets it: `npm pack` of this project with its prebuilt native parts, installed
// with the README's own commands (`npm install -g` of the tarball into a fresh prefix, and `npx` of
// it) on a PATH that holds no cc, gcc, g++, make or python3, so that nothing of this project can be
// compiled; then the installed daemon's --version, and an `echo hi` task and a pty task through
// MCP. Then its native parts are broken one at a time: each time the daemon says in one line which
// part, why, and how to rebuild it, and exits 1; a prebuilt addon that does not load gives way to
// a built one; and without its prebuilds, the install step says it cannot build them without
// python3, make and g++. It runs under the Node that runs the suite
// (CI: 20, then 26).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, delimiter, dirname, join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { readListeningUrl } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { killMarkedProcesses } from '../helpers/processes.js';
import { makeScratchDir } from '../helpers/scratch.js';

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
const PLATFORM = `${process.platform}-${process.arch}`;
/** What the install may use: no compiler, no make, no python3. */
const TOOLS = ['npm', 'npx', 'sh', 'bash'];
const COMPILERS = ['cc', 'gcc', 'g++', 'c++', 'make', 'python3'];

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

/** The first `name` on the runner's PATH. */
function which(name: string): string {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter((dir) => dir !== '');
  const found = dirs.map((dir) => join(dir, name)).find((path) => existsSync(path));
  assert.ok(found, `${name} is not on PATH`);
  return found;
}

/** A directory of links to this Node and TOOLS alone: the PATH of an install that cannot compile. */
function toolsDir(scratch: string): string {
  const tools = join(scratch, 'tools');
  mkdirSync(tools);
  symlinkSync(process.execPath, join(tools, 'node'));
  for (const name of TOOLS) symlinkSync(which(name), join(tools, name));
  for (const name of COMPILERS) assert.ok(!existsSync(join(tools, name)));
  return tools;
}

/** Runs `command` with sh, as a reader would type it. */
async function shell(command: string, cwd: string, env: Record<string, string>) {
  return run('sh', ['-c', command], { cwd, env: cleanEnv(env), maxBuffer: 16 * 1024 * 1024, timeout: 15 * 60_000 });
}

/** npm's warnings, but the one of the test's own stand-in for GitHub (an env config npm does not know). */
function npmWarnings(stderr: string): string[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('npm warn') && !line.includes('better-sqlite3-binary-host'));
}

/**
 * better-sqlite3's install (prebuild-install) downloads its prebuilt addon from its GitHub releases,
 * which cannot be reached here nor in CI: only the npm registry can. This server stands in for
 * GitHub, serving this checkout's own build as that release asset, at the path prebuild-install asks
 * a `npm_config_better_sqlite3_binary_host` for (node_modules/prebuild-install/util.js):
 * {host}/v{version}/better-sqlite3-v{version}-node-v{abi}-{platform}-{arch}.tar.gz holding
 * build/Release/better_sqlite3.node.
 */
async function githubStandIn(t: TestContext, scratch: string) {
  const own = join(ROOT, 'node_modules', 'better-sqlite3');
  const { version } = JSON.parse(readFileSync(join(own, 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${PLATFORM}.tar.gz`;
  const tarball = join(scratch, name);
  await run('tar', ['-czf', tarball, '-C', own, 'build/Release/better_sqlite3.node']);
  const asset = readFileSync(tarball);
  const served: string[] = [];
  const server = createServer((request, response) => {
    served.push(request.url ?? '');
    if (request.url === `/v${version}/${name}`) response.end(asset);
    else response.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // prebuild-install keeps what it downloads in npm's cache, under a name made from the URL (util.js
  // cachedPrebuild): this port's is removed after.
  const cache = (await run('npm', ['config', 'get', 'cache'], { env: cleanEnv() })).stdout.trim();
  const url = `${host}/v${version}/${name}`;
  const digest = createHash('sha512').update(url).digest('hex').slice(0, 6);
  t.after(() =>
    rmSync(join(cache, '_prebuilds', `${digest}-${basename(url).replace(/[^a-zA-Z0-9.]+/g, '-')}`), { force: true }),
  );
  return { env: { npm_config_better_sqlite3_binary_host: host }, served };
}

/** `npm pack` of the checkout; where it has no prebuilds for this platform, of a copy given some. */
async function pack(scratch: string): Promise<{ tarball: string; version: string; files: string[] }> {
  const packOf = async (cwd: string) => {
    // dist is built by npm test (npm run build) before the tests run: no prepare here.
    const args = ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch];
    const [packed] = JSON.parse((await run('npm', args, { cwd, env: cleanEnv() })).stdout) as Array<{
      filename: string;
      version: string;
      files: Array<{ path: string }>;
    }>;
    return { tarball: packed!.filename, version: packed!.version, files: packed!.files.map((file) => file.path) };
  };
  const packed = await packOf(ROOT);
  if (packed.files.includes(`prebuilds/${PLATFORM}/hive_native.node`)) return packed;
  const stage = join(scratch, 'stage');
  mkdirSync(stage);
  await run('tar', ['-xzf', join(scratch, packed.tarball), '-C', stage]);
  const out = join(stage, 'package', 'prebuilds');
  await run(process.execPath, [join(ROOT, 'native', 'prebuild.js'), '--out', out, process.arch]);
  return packOf(join(stage, 'package'));
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

/** The installed daemon, on the PATH without compilers, runs `echo hi` and a pty task for an MCP client. */
async function serveTasks(t: TestContext, bin: string, scratch: string, tools: string) {
  const marker = `hive-bash-install-${process.pid}`;
  const daemon = spawn(
    bin,
    ['--port', '0', '--state-dir', join(scratch, 'state'), '--containment', 'process-group', '--log-level', 'warn'],
    { env: cleanEnv({ PATH: tools, HIVE_TEST_MARK: marker }), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  daemon.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = once(daemon, 'exit');
  t.after(async () => {
    if (daemon.exitCode === null && daemon.signalCode === null) daemon.kill('SIGKILL');
    await killMarkedProcesses(`HIVE_TEST_MARK=${marker}`);
  });
  const url = await readListeningUrl(daemon, () => stderr);
  const tools_ = await connectClient(t, url);
  const piped = await tools_.ok('run', { command: 'echo hi', wait_seconds: 30 });
  assert.deepEqual([piped.state, piped.exit_code, piped.stdout_tail], ['done', 0, 'hi\n']);
  // Shell builtins only: the daemon's PATH is the install's, without tty or stty.
  const command = 'echo hi; test -t 0 && test -t 1 && echo on-a-terminal';
  const onTerminal = await tools_.ok('run', { command, pty: true, wait_seconds: 30 });
  assert.deepEqual(
    [onTerminal.state, onTerminal.exit_code, onTerminal.stdout_tail],
    ['done', 0, 'hi\r\non-a-terminal\r\n'],
  );
  await tools_.client.close();
  daemon.kill('SIGTERM');
  assert.deepEqual(await exited, [0, null], stderr);
}

test(
  "the packed package installs with the README's commands, compiling nothing of its own, and serves",
  { timeout: 20 * 60_000 },
  async (t: TestContext) => {
    try {
      await run('npm', ['ping'], { env: cleanEnv() });
    } catch (error) {
      return t.skip(`the npm registry is unreachable (npm ping: ${(error as Error).message.split('\n')[0]})`);
    }
    const scratch = makeScratchDir(t, 'install');
    const packed = await pack(scratch);
    assert.deepEqual(
      packed.files.filter((path) => path.startsWith('native/build')),
      [],
      'no build of this machine ships',
    );
    for (const part of [
      'hive_native.node',
      'hive-task-shim',
      'hive-task-spawner',
      'hive-task-init',
      'hive-daemon-init',
    ])
      assert.ok(packed.files.includes(`prebuilds/${PLATFORM}/${part}`), part);
    t.diagnostic(`${packed.tarball}: ${(readFileSync(join(scratch, packed.tarball)).length / 1e6).toFixed(1)} MB`);

    // The README's lines, as it shows them.
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const allow = `--allow-scripts=better-sqlite3,file:$PWD/${packed.tarball}`;
    const install = `npm install -g ${allow} ./${packed.tarball}`;
    const npx = `npx --yes ${allow} --package=./${packed.tarball} hive-bash-daemon --version`;
    for (const line of [install, npx]) assert.ok(readme.includes(`\n${line}`), `README.md shows: ${line}`);

    const tools = toolsDir(scratch);
    const github = await githubStandIn(t, scratch);
    const prefix = join(scratch, 'prefix');
    const started = Date.now();
    const installed = await shell(install, scratch, { PATH: tools, npm_config_prefix: prefix, ...github.env });
    t.diagnostic(`${install}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    assert.deepEqual(npmWarnings(installed.stderr), [], installed.stderr);
    const packageDir = join(prefix, 'lib', 'node_modules', 'hive-bash-daemon');
    assert.equal(existsSync(join(packageDir, 'native', 'build')), false, 'nothing of its own was compiled');
    assert.equal(github.served.length, 1, `better-sqlite3 fetched its prebuild once: ${github.served.join(', ')}`);

    const bin = (name: string) => join(prefix, 'bin', name);
    const version = await runBin(bin('hive-bash-daemon'), ['--version'], { PATH: tools });
    assert.deepEqual(version, { code: 0, stdout: `${packed.version}\n`, stderr: '' });
    await serveTasks(t, bin('hive-bash-daemon'), scratch, tools);

    // npx of the tarball, into an npm cache of its own (npx keeps what it installs there).
    const npxStarted = Date.now();
    const ran = await shell(npx, scratch, { PATH: tools, npm_config_cache: join(scratch, 'npx-cache'), ...github.env });
    t.diagnostic(`${npx}: ${((Date.now() - npxStarted) / 1000).toFixed(1)} s`);
    assert.equal(ran.stdout, `${packed.version}\n`);
    assert.deepEqual(npmWarnings(ran.stderr), [], ran.stderr);

    // A broken install is told in one line: which part, why, and the command that rebuilds it.
    const prebuilt = join(packageDir, 'prebuilds', PLATFORM);
    const release = join(packageDir, 'native', 'build', 'Release');
    const foreign = await buildForeignAddon(scratch);
    const rebuildOwn = `npm rebuild --prefix ${join(prefix, 'lib')} hive-bash-daemon (it needs python3, make and g++)`;
    const ptyPackage = join(packageDir, 'node_modules', '@lydell', `node-pty-${PLATFORM}`);
    const cases: Array<{ path: string; replacement: string | null; says: string }> = [
      {
        path: join(prebuilt, 'hive_native.node'),
        replacement: null,
        says: `the native addon ${join(release, 'hive_native.node')} is not built; rebuild it with: ${rebuildOwn}`,
      },
      {
        path: join(prebuilt, 'hive_native.node'),
        replacement: foreign,
        says: `the native addon ${join(prebuilt, 'hive_native.node')} was built for another Node (NODE_MODULE_VERSION ${FOREIGN_VERSION}; this Node ${process.version} needs ${process.versions.modules}); rebuild it with: ${rebuildOwn}`,
      },
      {
        path: join(prebuilt, 'hive-task-shim'),
        replacement: null,
        says: `the executable ${join(release, 'hive-task-spawner')} is not built; rebuild it with: ${rebuildOwn}`,
      },
      {
        path: join(packageDir, 'node_modules', 'better-sqlite3', 'build'),
        replacement: null,
        says: `better-sqlite3's addon is not built; rebuild it with: npm rebuild --prefix ${packageDir} better-sqlite3 (it needs python3, make and g++)`,
      },
      {
        path: ptyPackage,
        replacement: null,
        says: `node-pty's addon is missing (@lydell/node-pty-${PLATFORM} is not installed: npm leaves it out under --omit=optional, and there is none for other platforms); install hive-bash-daemon again without --omit=optional`,
      },
    ];
    for (const { path, replacement, says } of cases) {
      renameSync(path, `${path}.aside`);
      if (replacement !== null) renameSync(replacement, path);
      const broken = await runBin(bin('hive-bash-daemon'), ['--port', '0', '--state-dir', join(scratch, 'state')]);
      if (replacement !== null) renameSync(path, replacement);
      renameSync(`${path}.aside`, path);
      assert.deepEqual(broken, { code: 1, stdout: '', stderr: `hive-bash-daemon: broken install: ${says}\n` });
    }

    // A prebuilt addon this machine cannot load (as on a glibc older than the 2.34 it needs) gives way
    // to the one the install step then built from source: here a copy of the prebuilt one stands in.
    const addon = join(prebuilt, 'hive_native.node');
    mkdirSync(release, { recursive: true });
    copyFileSync(addon, join(release, 'hive_native.node'));
    renameSync(addon, `${addon}.aside`);
    renameSync(foreign, addon);
    const partsModule = pathToFileURL(join(packageDir, 'dist', 'src', 'process', 'install-check.js')).href;
    const script = `const { findBrokenNativePart } = await import('${partsModule}'); console.log(findBrokenNativePart());`;
    const fallback = await runBin(process.execPath, ['--input-type=module', '-e', script]);
    renameSync(addon, foreign);
    renameSync(`${addon}.aside`, addon);
    rmSync(join(packageDir, 'native', 'build'), { recursive: true });
    assert.deepEqual(fallback, { code: 0, stdout: 'null\n', stderr: '' });

    // Without prebuilds for this platform, the install step builds from source: here it cannot, and says why.
    renameSync(prebuilt, `${prebuilt}.aside`);
    const installStep = await runBin(process.execPath, [join(packageDir, 'native', 'install.js')], { PATH: tools });
    renameSync(`${prebuilt}.aside`, prebuilt);
    assert.deepEqual(installStep, {
      code: 1,
      stdout: '',
      stderr: `hive-bash-daemon: cannot build the native parts: the package has no prebuilt native parts for ${PLATFORM}, and building them from native/src needs python3, make and g++ (missing here: python3, make, g++)\n`,
    });
  },
);
