// Daemons started where users start them: as root on the host; as a normal user made for the test;
// as root in a user namespace (`unshare --user --map-root-user`, as rootless Podman gives one); and
// in a real Podman container (Debian's podman with runc: Docker's default capability set and seccomp
// profile, cgroupfs read-only), as the container's PID 1, under a shell, and with CAP_SYS_ADMIN added.
// Each is torn down at its test's end however the test went: processes, container, user, state dir.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { TestContext } from 'node:test';
import {
  cleanEnv,
  DAEMON_NODE_FLAGS,
  MAIN_JS,
  nativeContainment,
  readListeningUrl,
  startTestDaemon,
} from './daemon.js';
import { killMarkedProcesses, waitFor } from './processes.js';

export const ENVIRONMENTS = ['host-root', 'user', 'userns-root', 'podman', 'podman-shell', 'podman-sys-admin'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export interface EnvDaemon {
  env: Environment;
  url: string;
  origin: string;
  /** The state dir as the host sees it, and as the daemon (and its tasks) see it. */
  stateDir: string;
  innerStateDir: string;
  /** A folder the daemon's tasks may write in, as they see it. */
  scratch: string;
  marker: string;
  stderr: () => string;
  /** The host pid of the process at the top of the daemon's tree (the container's first process, else the daemon). */
  topPid: () => number;
}

/** Why Podman cannot run a container here, or null when it can. */
export function podmanMissing(): string | null {
  for (const tool of ['podman', 'runc']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      return `${tool} is not installed (.ci/install-podman installs it)`;
    }
  }
  return null;
}

/**
 * Starts a daemon in `env` with `args`; everything it made is removed at the end of `t`. `runUnder`
 * (for 'user' only) is a command line the setpriv that makes the normal user is run under, as root.
 */
export async function startIn(
  t: TestContext,
  env: Environment,
  args: string[] = [],
  runUnder: string[] = [],
): Promise<EnvDaemon> {
  if (env.startsWith('podman')) return startInPodman(t, env, args);
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-env-'));
  const scratch = mkdtempSync(join(tmpdir(), 'hive-bash-env-scratch-'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const options =
    env === 'user'
      ? { wrapper: [...runUnder, ...userWrapper(t, [stateDir, scratch])], containment: 'process-group' as const }
      : env === 'userns-root'
        ? { wrapper: ['unshare', '--user', '--map-root-user', '--mount', '--'], containment: nativeContainment() }
        : { containment: nativeContainment() };
  const daemon = await startTestDaemon(t, { ...options, stateDir, args });
  const pid = daemon.child.pid!;
  return {
    env,
    url: daemon.url,
    origin: daemon.origin,
    stateDir,
    innerStateDir: stateDir,
    scratch,
    marker: daemon.marker,
    stderr: daemon.stderr,
    topPid: () => pid,
  };
}

/** A normal user made for the test, owning `dirs`; the setpriv that runs the daemon as it. */
function userWrapper(t: TestContext, dirs: string[]): string[] {
  const name = `hbt${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', '--user-group', name]);
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }));
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }));
  t.after(async () => {
    // Whatever still runs as the test's own user is the test's: killed, and gone, before the user.
    const left = () => spawnSync('pgrep', ['-U', String(uid)]).status === 0;
    await waitFor(() => {
      spawnSync('pkill', ['-KILL', '-U', String(uid)]);
      return !left();
    }, 10_000);
    execFileSync('userdel', [name]);
  });
  for (const dir of dirs) chownSync(dir, uid, gid);
  return ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--inh-caps=-all', '--'];
}

/** A root directory for a container: empty folders, and the links of a merged /usr (its caller removes it). */
function makeRootfs(): string {
  const root = mkdtempSync(join(tmpdir(), 'hive-bash-rootfs-'));
  for (const dir of ['usr', 'etc', 'tmp', 'proc', 'sys', 'dev', 'run', 'state']) mkdirSync(join(root, dir));
  for (const link of ['bin', 'lib', 'lib64', 'sbin']) symlinkSync(`usr/${link}`, join(root, link));
  return root;
}

/** The folders the daemon needs from the host, each bound read-only at its own path: this checkout, its packages, its Node. */
function hostFolders(): string[] {
  const repo = realpathSync(resolve(dirname(MAIN_JS), '../../..'));
  const packages = realpathSync(join(repo, 'node_modules'));
  const node = resolve(realpathSync(process.execPath), '../..');
  const folders = [repo, packages, node].filter((dir) => dir !== '/usr' && !dir.startsWith('/usr/'));
  return [...new Set(folders)].filter(
    (dir, _, all) => !all.some((other) => other !== dir && dir.startsWith(`${other}/`)),
  );
}

/** The daemon in a Podman container, on the host's network; the test's client is outside its PID namespace. */
async function startInPodman(t: TestContext, env: Environment, args: string[]): Promise<EnvDaemon> {
  const marker = randomUUID();
  const name = `hive-bash-test-${marker.slice(0, 12)}`;
  // Both removed once the container is (launchPodman): before, a task may still write in them.
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-env-'));
  const rootfs = makeRootfs();
  const config = join(stateDir, '..', `${name}.conf`);
  writeFileSync(config, '[containers]\ndefault_ulimits = []\n');
  const daemon = [
    process.execPath,
    ...DAEMON_NODE_FLAGS,
    MAIN_JS,
    '--port',
    '0',
    '--state-dir',
    '/state',
    '--log-level',
    'warn',
    ...args,
  ];
  const quoted = daemon.map((word) => `'${word.replace(/'/g, `'\\''`)}'`).join(' ');
  const command = env === 'podman-shell' ? ['/bin/sh', '-c', `${quoted} & wait`] : daemon;
  const podman = [
    '--runtime',
    '/usr/sbin/runc',
    'run',
    '--rm',
    '--name',
    name,
    '--network=host',
    '-v',
    '/usr:/usr:ro',
    '-v',
    '/etc:/etc:ro',
    ...hostFolders().flatMap((dir) => ['-v', `${dir}:${dir}:ro`]),
    '-v',
    `${stateDir}:/state`,
    '-e',
    `HIVE_TEST_MARK=${marker}`,
    ...(env === 'podman-sys-admin' ? ['--cap-add', 'SYS_ADMIN'] : []),
    '--rootfs',
    rootfs,
    ...command,
  ];
  const { url, stderr } = await launchPodman(t, podman, { CONTAINERS_CONF: config }, name, marker, [stateDir, rootfs]);
  return {
    env,
    url,
    origin: new URL(url).origin,
    stateDir,
    innerStateDir: '/state',
    scratch: '/tmp',
    marker,
    stderr,
    topPid: () =>
      Number(
        execFileSync('podman', ['inspect', '--format', '{{.State.Pid}}', name], {
          encoding: 'utf8',
          env: { ...process.env, CONTAINERS_CONF: config },
        }),
      ),
  };
}

/** Runs podman with `args` until the daemon inside prints its URL; removes the container at the end of `t`, then `dirs`. */
async function launchPodman(
  t: TestContext,
  args: string[],
  env: Record<string, string>,
  name: string,
  marker: string,
  dirs: string[],
): Promise<{ url: string; stderr: () => string }> {
  const child = spawn('podman', args, { env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const podman = (...words: string[]) =>
    spawnSync('podman', words, { stdio: 'ignore', env: { ...process.env, ...env } }).status;
  // podman's own cleanup of an exited container (conmon's `container cleanup --rm`) can hold it
  // while this removes it, and either then gives up: remove until it is gone, 50 tries at most.
  const remove = async () => {
    for (let tries = 0; tries < 50 && podman('container', 'exists', name) === 0; tries++) {
      podman('rm', '--force', '--time', '0', name);
      await sleep(100);
    }
  };
  t.after(async () => {
    // Gone already where the daemon exited (--rm): podman says so, and that is fine.
    await remove();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit').catch(() => {});
    }
    // Again: a `podman run` killed before its own --rm leaves the exited container behind (seen
    // after CI: six of them, "Exited (137)").
    await remove();
    await killMarkedProcesses(`HIVE_TEST_MARK=${marker}`);
    // node:test runs a test's after hooks in the order they were added: one added by the caller
    // would remove the container's folders while its processes still wrote there (ENOTEMPTY).
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    // Last: podman reads it for every call above (node:test runs a test's after hooks in the order
    // they were added, so one added by the caller would run first).
    if (env.CONTAINERS_CONF !== undefined) rmSync(env.CONTAINERS_CONF, { force: true });
  });
  const url = await readListeningUrl(child, () => stderr);
  return { url, stderr: () => stderr };
}
