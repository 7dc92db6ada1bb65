// The typed facade of the native addon (native/): the only module that loads it. Where it cannot
// load (another OS, a failed build), `loadNative` says why once and callers fall back.
// The parts are looked for first among the package's prebuilds for this platform (npm run prebuilds:
// prebuilds/linux-x64/, prebuilds/linux-arm64/), then in what npm install built from native/src.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { NativeUnavailableError } from '../errors.js';

const PACKAGE_URL = new URL('../../../', import.meta.url);
/** The package's prebuilt parts for this platform (native/prebuild.js), if it has them. */
const PREBUILD_DIR = fileURLToPath(new URL(`prebuilds/${process.platform}-${process.arch}/`, PACKAGE_URL));
/** What npm install built from native/src where there is no prebuild (native/install.js). */
const BUILD_DIR = fileURLToPath(new URL('native/build/Release/', PACKAGE_URL));
/** Where the executables are: among the prebuilds when the package has them for this platform, else the build. */
const EXECUTABLE_DIR = existsSync(`${PREBUILD_DIR}hive-task-shim`) ? PREBUILD_DIR : BUILD_DIR;
/** The per-task shim executable (native/src/shim.c). */
export const SHIM_PATH = `${EXECUTABLE_DIR}hive-task-shim`;
/** The small process that spawns shims for a worker thread (native/src/spawner.c). */
export const SPAWNER_PATH = `${EXECUTABLE_DIR}hive-task-spawner`;
/** The maker and init of the tasks' own PID and mount namespace (native/src/task-init.c). */
export const INIT_PATH = `${EXECUTABLE_DIR}hive-task-init`;
/** PID 1 above a daemon that is a container's first process (native/src/daemon-init.c). */
export const DAEMON_INIT_PATH = `${EXECUTABLE_DIR}hive-daemon-init`;
/** The shim's name in the command lines it shows: no path (whose folders may read like the daemon's name). */
export const SHIM_NAME = 'hive-task-shim';

export interface NativeAddon {
  /** posix_spawn of `path` in a new session: no fork() of the daemon. */
  spawn(options: { path: string; argv: string[]; env: string[]; cwd: string; fds: number[] }): {
    pid: number;
    pidfd: number;
  };
  /** Sends the spawner behind `socket` a request to spawn, as `spawn` does; its answer comes on the spawner's answer socket. */
  spawnRequest(
    socket: number,
    options: { path: string; argv: string[]; env: string[]; cwd: string; fds: number[] },
  ): void;
  /** A connected, close-on-exec unix stream socket pair. */
  socketPair(): [number, number];
  /** A close-on-exec pipe: [read end, write end]. */
  pipe(): [number, number];
  /** A close-on-exec memfd holding `text` in UTF-8, read from its start. */
  textFd(text: string): number;
  /** The Landlock ABI version this kernel offers, 0 for none. */
  landlockAbi(): number;
  /** What this kernel lacks of the calls a sandbox makes, in words, or null. */
  sandboxKernelGap(): string | null;
  /**
   * The deepest kernel interface mount (proc, sysfs, cgroupfs and the like, or the one at /dev) whose
   * point is `path` or holds it (`path` absolute and resolved): its point and file system type, or
   * null for none. Every sandboxed task has these read-only (native/src/sandbox-kernel.c).
   */
  kernelMountOf(path: string): { point: string; type: string } | null;
  /**
   * A terminal of `cols` by `rows` in a devpts instance of its own that is mounted nowhere yet (a
   * sandboxed task's leader attaches it as its /dev/pts): the mount's fd, the master's, and the
   * terminal's number in it (its slave is the mount's entry of that name).
   */
  openDetachedTerminal(cols: number, rows: number): { mountFd: number; masterFd: number; number: number };
  /**
   * The TCP socket of this network namespace whose local end is `local`:`localPort` and remote end
   * `remote`:`remotePort` (4 bytes each for IPv4, 16 for IPv6): its inode (0 for one in TIME_WAIT or
   * orphaned), the id of the cgroup v2 its maker was in (0n: not said), its maker's uid and its TCP
   * state (1: established; past it, it has sent its FIN); null for none. A lookup in the kernel's
   * connection hash (sock_diag).
   */
  tcpSocket(
    local: Buffer,
    localPort: number,
    remote: Buffer,
    remotePort: number,
  ): { inode: number; cgroupId: bigint; uid: number; state: number } | null;
  close(fd: number): void;
  setCloseOnExec(fd: number): void;
  /** Whether the terminal at `fd` is in canonical (line) mode, where Ctrl-D reads as end of file. */
  lineMode(fd: number): boolean;
  /**
   * Reaps the process behind `pidfd`: null while it runs; `code` -1 when `signal` ended it. With
   * `block` (1) it waits for the exit: only for a process known to be exiting.
   */
  reap(pidfd: number, block: 0 | 1): { code: number; signal: number } | null;
  pidfdOpen(pid: number): number;
  /** false when the process is already gone. */
  sendSignal(pidfd: number, signal: number): boolean;
  /**
   * With `bound`, the child behind `pidfd` is killed and reaped, and `pidfd` closed, when the
   * calling thread ends (however it ends); without, that is undone, before the caller reaps it.
   */
  reapAtThreadEnd(pidfd: number, bound: boolean): void;
  /** Replaces this process, every thread of it, with `path` (execve), fds 0 to 2 and `fds` kept open; returns only by throwing. */
  exec(path: string, argv: string[], env: string[], fds: number[]): never;
  /** Whether other processes of this user may trace this one and reach its memory and files in /proc. */
  setDumpable(on: boolean): void;
}

/** An error from the addon: `code` is the errno name (ENOENT, EACCES, ...), the message `CALL failed: TEXT`. */
export interface NativeError extends Error {
  code: string;
}

const BUILT_ADDON = `${BUILD_DIR}hive_native.node`;
/** The addon's file: the prebuilt one when the package has it for this platform, else the build's. */
export const ADDON_PATH = existsSync(`${PREBUILD_DIR}hive_native.node`)
  ? `${PREBUILD_DIR}hive_native.node`
  : BUILT_ADDON;

let loaded: { addon: NativeAddon } | { error: string; cause?: Error } | null = null;

/** The addon, or the reason it cannot be used here (and the error that says so). Loaded once. */
export function loadNative(): { addon: NativeAddon } | { error: string; cause?: Error } {
  if (loaded) return loaded;
  if (process.platform !== 'linux')
    return (loaded = { error: `native process control needs Linux; this is ${process.platform}` });
  try {
    loaded = { addon: requireAddon() };
  } catch (error) {
    loaded = {
      error: `the native addon could not be loaded (${(error as Error).message}); run npm install to build it`,
      cause: error as Error,
    };
  }
  return loaded;
}

/**
 * The addon at ADDON_PATH; where that is a prebuild this machine cannot load (a C library older than
 * the one it was linked against), the one npm install then built from source, if it did.
 */
function requireAddon(): NativeAddon {
  const require = createRequire(import.meta.url);
  try {
    return require(ADDON_PATH) as NativeAddon;
  } catch (error) {
    if (ADDON_PATH === BUILT_ADDON || !existsSync(BUILT_ADDON)) throw error;
    return require(BUILT_ADDON) as NativeAddon;
  }
}

/** The addon, for code that runs only where loadNative succeeded. */
export function nativeAddon(): NativeAddon {
  const result = loadNative();
  if ('error' in result) throw new NativeUnavailableError(result.error);
  return result.addon;
}
