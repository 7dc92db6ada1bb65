// Opens the pseudo-terminals of pty tasks with node-pty (as @lydell/node-pty: node-pty 1.1.0 with its
// addon prebuilt, in @lydell/node-pty-linux-x64 and the like). This is the only place that loads
// node-pty, and it runs on the supervisor's main thread: node-pty is not safe across worker
// threads (its README says so, and a "HandleScope without proper locking" crash was reported from
// a worker), so it is hosted once, here, and only its fds and the slave's path go to the worker.
//
// Of node-pty, only the terminal pair is used (its native open: openpty with the size set), not
// its spawn. node-pty's spawn forks the whole daemon with forkpty() on the calling thread and
// keeps one thread per terminal waiting for the child, and the child it starts could not carry
// the shim's control and status fds. A pty task instead starts like every other task: through its
// worker's spawner and shim, with the terminal's slave as the shim's stdio. So it is contained,
// timed out and killed the same way, down to every process it started.
//
// A sandboxed task's terminal comes from a devpts instance of its own instead (the addon's, not
// node-pty's), which its leader mounts as its /dev/pts: there it is /dev/pts/0, and other tasks'
// and the host's terminals are not.
import { closeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadNative, nativeAddon } from './native.js';

interface PtyNative {
  /** openpty(): the master (non-blocking) and the slave, both open, and the slave's path. */
  open(cols: number, rows: number): { master: number; slave: number; pty: string };
}

export const DEFAULT_COLUMNS = 120;
export const DEFAULT_ROWS = 40;
/** The largest width and height a run may ask for; also the width clean text assumes for a terminal of unknown size. */
export const MAX_TERMINAL_SIZE = 1000;

let native: PtyNative | null = null;

/** Loads node-pty's addon through its package's own loader (from the package of this platform). */
function ptyNative(): PtyNative {
  if (native === null) {
    const { requireBinary } = createRequire(import.meta.url)('@lydell/node-pty/requireBinary.js') as {
      requireBinary: (file: string) => PtyNative;
    };
    native = requireBinary('pty.node');
  }
  return native;
}

/**
 * A new terminal of `cols` by `rows`: the master's fd, for the worker to own, and the slave's
 * path, which the worker opens as the task's stdio; for a sandboxed task (`sandboxed`), in a devpts
 * of its own. The slave fd openpty returned is closed here at once. openpty does not set
 * close-on-exec, so it is set here: a master inherited by another task would let it read this
 * task's terminal, and keep the terminal from ever being freed. The native spawner hands a child
 * only the fds it names in any case; under Node's spawn (no addon) close-on-exec is the only guard.
 */
export function openTerminal(cols: number, rows: number, sandboxed = false): OpenedTerminal {
  if (sandboxed) return openSandboxTerminal(cols, rows);
  const { master, slave, pty } = ptyNative().open(cols, rows);
  closeSync(slave);
  const native = loadNative();
  if ('addon' in native) native.addon.setCloseOnExec(master);
  return { masterFd: master, path: pty, devptsFd: null };
}

/**
 * A new terminal of `cols` by `rows` for a sandboxed task, in a devpts instance of its own that is
 * mounted nowhere yet: `devptsFd` holds it until the task's leader attaches it as its /dev/pts.
 * The slave's path goes through that fd, so it is good while the fd is open.
 */
function openSandboxTerminal(cols: number, rows: number): OpenedTerminal {
  const { mountFd, masterFd, number } = nativeAddon().openDetachedTerminal(cols, rows);
  return { masterFd, path: `/proc/self/fd/${mountFd}/${number}`, devptsFd: mountFd };
}

/** A terminal's master, its slave's path, and the detached devpts mount it is in (a sandboxed task's), or null. */
export interface OpenedTerminal {
  masterFd: number;
  path: string;
  devptsFd: number | null;
}
