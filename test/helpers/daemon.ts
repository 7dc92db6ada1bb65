// Starts the real daemon as a child process on a free port with a state directory of its own,
// and guarantees that nothing it or its tasks started survives the test.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { createTestCgroupRoot, removeDaemonV1Folders, removeTestCgroupRoot, sharedCgroupFolder } from './cgroups.js';
import { killMarkedProcesses } from './processes.js';
import { makeScratchDir } from './scratch.js';
import { daemonFolderName } from '../../src/process/cgroups.js';
import { REGEXP_ENGINE_FLAGS } from '../../src/supervisor/readiness/wait-pattern.js';
import { HEAP_FLAGS } from '../../src/supervisor/heap-flags.js';

export const MAIN_JS = new URL('../../src/supervisor/main.js', import.meta.url).pathname;
/** Node's flags before MAIN_JS, as every launcher of the daemon gives them (it refuses to start without). */
export const DAEMON_NODE_FLAGS: readonly string[] = [...REGEXP_ENGINE_FLAGS, ...HEAP_FLAGS];

/** Containment for test daemons: HIVE_TEST_CONTAINMENT, else cgroup where writable. */
export type TestContainment = 'cgroup' | 'process-group' | 'node';

/** The containment test daemons get unless a test names one: HIVE_TEST_CONTAINMENT's, else cgroup. */
export function defaultContainment(): TestContainment {
  return (process.env.HIVE_TEST_CONTAINMENT as TestContainment | undefined) ?? 'cgroup';
}

/**
 * The containment of tests of what only the native spawner does (the tasks' namespace, sandboxes):
 * the default, but process-group where it is node (Node's spawn has neither).
 */
export function nativeContainment(): TestContainment {
  const chosen = defaultContainment();
  return chosen === 'node' ? 'process-group' : chosen;
}

export interface DaemonOptions {
  args?: string[];
  /** Default: HIVE_TEST_CONTAINMENT, else cgroup where cgroups are writable, else process-group. */
  containment?: TestContainment;
  env?: Record<string, string>;
  /** cgroup mode without --cgroup-root: the daemon takes its own folder in the cgroup2 mount's shared one. */
  sharedCgroupRoot?: boolean;
  /** Reuse a state directory (a restart); by default a fresh one is made and removed. */
  stateDir?: string;
  /** A command that execs the daemon's Node in the end, such as setpriv with some capability dropped. */
  wrapper?: string[];
}

export interface TestDaemon {
  url: string;
  origin: string;
  stateDir: string;
  /**
   * A folder of the test's, which tasks see and the test writes (gates, files for a task to read):
   * of the state dir, tasks see their output folder alone. Removed at the end of the test.
   */
  scratch: string;
  /** Every process the daemon or a task started carries HIVE_TEST_MARK=<marker>. */
  marker: string;
  containment: TestContainment;
  /** The folder the daemon creates task cgroups in (cgroup mode), else null. */
  cgroupRoot: string | null;
  child: ChildProcess;
  stderr: () => string;
  /** SIGTERM and wait for the exit; returns the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL the daemon alone (its tasks stay), as a crash would. */
  crash(): Promise<void>;
}

/**
 * The state dirs of test daemons: whether a test daemon made it, and how many started on it have not
 * been torn down. The last teardown removes one a test daemon made: a daemon started again on it
 * (a restart) outlives the first one's teardown, which runs first, and would make its output folder
 * again in a state dir removed under it.
 */
const stateDirs = new Map<string, { made: boolean; users: number }>();

/** Starts a daemon and registers its teardown (which kills every process it left) with `t`. */
export async function startTestDaemon(t: TestContext, options: DaemonOptions = {}): Promise<TestDaemon> {
  const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'hive-bash-test-'));
  const use = stateDirs.get(stateDir) ?? { made: options.stateDir === undefined, users: 0 };
  stateDirs.set(stateDir, { ...use, users: use.users + 1 });
  const marker = options.env?.HIVE_TEST_MARK ?? randomUUID();
  let containment = options.containment ?? defaultContainment();
  const shared = options.sharedCgroupRoot === true;
  const cgroupRoot =
    containment !== 'cgroup' ? null : shared ? sharedCgroupFolder(stateDir) : createTestCgroupRoot(marker);
  if (containment === 'cgroup' && cgroupRoot === null) containment = 'process-group';
  const containmentArgs =
    cgroupRoot === null || shared
      ? ['--containment', containment]
      : ['--containment', 'cgroup', '--cgroup-root', cgroupRoot];
  const args = [
    '--port',
    '0',
    '--state-dir',
    stateDir,
    '--log-level',
    'warn',
    ...containmentArgs,
    ...(options.args ?? []),
  ];
  const started: { folder?: string } = {};
  const { child, url, stderr } = await launchDaemon(
    args,
    { ...options.env, HIVE_TEST_MARK: marker },
    async () => {
      await killMarkedProcesses(`HIVE_TEST_MARK=${marker}`);
      // Named once it started: the state dir may be gone by now (a caller's, removed first).
      if (started.folder !== undefined) await removeDaemonV1Folders(started.folder);
      if (cgroupRoot !== null && options.env?.HIVE_TEST_MARK === undefined) await removeTestCgroupRoot(cgroupRoot);
      const left = stateDirs.get(stateDir)!;
      if (left.users > 1) stateDirs.set(stateDir, { ...left, users: left.users - 1 });
      else {
        stateDirs.delete(stateDir);
        if (left.made) rmSync(stateDir, { recursive: true, force: true });
      }
    },
    t,
    options.wrapper,
  );
  started.folder = daemonFolderName(stateDir);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    url,
    origin: new URL(url).origin,
    stateDir,
    scratch: makeScratchDir(t, 'daemon'),
    marker,
    containment,
    cgroupRoot,
    child,
    stderr,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
    async crash() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * Spawns the daemon binary and resolves once it prints its URL. `cleanup` runs after the daemon is
 * gone: at the end of test `t` when one is given (even if the test failed), else when the caller kills it.
 */
export async function launchDaemon(
  args: string[],
  env: Record<string, string>,
  cleanup: () => Promise<void> | void,
  t?: TestContext,
  wrapper: string[] = [],
): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  // HIVE_DAEMON_NODE_ARGS puts Node's own flags before the daemon's (say `--cpu-prof --cpu-prof-dir=DIR`
  // to profile a benchmark's daemon; Node refuses those in NODE_OPTIONS).
  const nodeArgs = process.env.HIVE_DAEMON_NODE_ARGS?.split(' ').filter((arg) => arg !== '') ?? [];
  const command = [...wrapper, process.execPath, ...DAEMON_NODE_FLAGS, ...nodeArgs, MAIN_JS, ...args];
  const child = spawn(command[0]!, command.slice(1), {
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const teardown = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit').catch(() => {});
    }
    await cleanup();
  };
  if (t) t.after(teardown);
  else child.once('exit', () => void cleanup());
  const url = await readListeningUrl(child, () => stderr);
  return { child, url, stderr: () => stderr };
}

/** The daemon's environment without anything of a daemon the test runner itself may have. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('HIVE_')) env[name] = value;
  }
  return env;
}

/** The URL the daemon prints once it listens; rejects if it exits or closes stdout first. */
export async function readListeningUrl(child: ChildProcess, stderr: () => string): Promise<string> {
  const lines = createInterface({ input: child.stdout! });
  const exit = once(child, 'exit').then(([code]) => {
    throw new Error(`the daemon exited with code ${code} before listening:\n${stderr()}`);
  });
  const listening = (async () => {
    for await (const line of lines) {
      const match = /^listening on (http:\/\/\S+)$/.exec(line);
      if (match) return match[1]!;
    }
    throw new Error(`the daemon closed stdout before listening:\n${stderr()}`);
  })();
  return Promise.race([listening, exit]);
}

/**
 * Runs the daemon binary to completion (for flags it refuses) and returns its exit and output.
 * `nodeFlags` are Node's, before MAIN_JS: by default the ones every launcher gives.
 */
export async function runDaemonBinary(
  args: string[],
  env: Record<string, string> = {},
  nodeFlags: readonly string[] = DAEMON_NODE_FLAGS,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeFlags, MAIN_JS, ...args], {
    env: { ...cleanEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // One that serves instead of exiting is killed, and the caller sees no exit code.
    timeout: 60_000,
    killSignal: 'SIGKILL',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const [code] = await once(child, 'exit');
  return { code: code as number | null, stdout, stderr };
}
