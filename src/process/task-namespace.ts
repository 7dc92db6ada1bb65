// The tasks' own PID and mount namespace (native/src/task-init.c): made once at start where the
// daemon may, and made again should its init die. Inside, a task's ps, pkill, killall and kill -1
// see and reach tasks only, the state dir is read-only and the token file reads as empty. The
// spawners join it through a pidfd of its init, which goes to the workers in each task's spec.
import { closeSync, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { readLines } from '../shared/line-reader.js';
import { describeErrno } from '../errors.js';
import { withTimeout } from '../with-timeout.js';
import { INIT_PATH, nativeAddon } from './native.js';
import { signalNumber } from '../shared/signals.js';
import { NO_NOTES, takeNote, type InitNotes } from './task-init-notes.js';

export type NamespaceChoice = 'auto' | 'off';

/** What the init makes read-only and hides in the tasks' view. */
export interface NamespacePlan {
  /** Directories tasks may read and not change (the state dir). */
  readOnly: string[];
  /** Directories beneath one of readOnly that tasks see alone of it, read-only (the output folder). */
  shown: string[];
  /** Files tasks read as empty (a token or policy file that shares its folder). */
  hidden: string[];
  /** Folders tasks see empty (those of the token, the policy file and the harness socket, where nothing else is in them). */
  hiddenDirs: string[];
}

/** How long the init may take to set up (a mount on a hung file system would hold it). */
const INIT_READY_MS = 10_000;
/** How long a stop waits for the init and everything in its namespace to be gone before it kills the outer process. */
const INIT_STOP_MS = 10_000;

interface RunningInit {
  /** The outer process's pidfd (the init's parent, which this thread spawned and reaps). */
  outerPidfd: number;
  /** The init's pidfd, which spawners join, and its pid as the host sees it. */
  pidfd: number;
  pid: number;
  /** Resolves once the outer process has exited and is reaped. */
  gone: Promise<void>;
}

/** The namespace tasks start in, or why they share the daemon's; `onLost` hears of an init's death. */
export class TaskNamespace {
  private running: RunningInit | null = null;
  private why: string;
  /** What the init could not have, in words. */
  private notes: InitNotes = { ...NO_NOTES };
  private stopping = false;

  private constructor(
    private readonly plan: NamespacePlan,
    private readonly onLost: (why: string, replaced: boolean) => void,
    why: string,
  ) {
    this.why = why;
  }

  /** Makes the namespace where `choice` and the host allow; else one that says why tasks share the daemon's. */
  static async start(
    choice: NamespaceChoice,
    spawner: 'native' | 'node',
    plan: NamespacePlan,
    onLost: (why: string, replaced: boolean) => void,
  ): Promise<TaskNamespace> {
    if (choice === 'off') return new TaskNamespace(plan, onLost, 'off by --task-namespace off');
    if (spawner === 'node') return new TaskNamespace(plan, onLost, 'needs the native spawner, which joins it');
    const namespace = new TaskNamespace(plan, onLost, 'starting');
    await namespace.startInit();
    return namespace;
  }

  /** The init's pidfd for the spawners, or null: tasks start in the daemon's namespaces. */
  get pidfd(): number | null {
    return this.running?.pidfd ?? null;
  }

  /** For the start line and /healthz. */
  describe(): {
    in_force: boolean;
    init_pid: number | null;
    read_only: string[];
    hidden: string[];
    mounts_locked: boolean;
    own_proc: boolean;
    reason: string | null;
    /** Why no task can be sandboxed where tasks run (tried by the init), or null. */
    sandbox_refused: string | null;
  } {
    const on = this.running !== null;
    return {
      in_force: on,
      init_pid: this.running?.pid ?? null,
      read_only: on ? this.plan.readOnly : [],
      hidden: on ? [...this.plan.hiddenDirs, ...this.plan.hidden] : [],
      mounts_locked: on && this.notes.unlocked === null,
      own_proc: on && this.notes.noOwnProc === null,
      reason: on
        ? [this.notes.unlocked, this.notes.noOwnProc].filter((why) => why !== null).join('; ') || null
        : this.why,
      sandbox_refused: on ? this.notes.noSandbox : null,
    };
  }

  /**
   * Ends the init, and with it every process left inside; resolves once they are all gone (the
   * outer process reaps the init, whose end waits for every process in its namespace), so that the
   * daemon's cgroup folders they were in can be removed.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    const running = this.running;
    if (running === null) return;
    const addon = nativeAddon();
    addon.sendSignal(running.outerPidfd, signalNumber('SIGTERM'));
    if ((await withTimeout(running.gone, INIT_STOP_MS, 'late')) === 'late') {
      addon.sendSignal(running.outerPidfd, signalNumber('SIGKILL'));
      // One that outlives even that (stuck in the kernel) is left: the stop goes on.
      await withTimeout(running.gone, INIT_STOP_MS, null);
    }
  }

  private async startInit(): Promise<void> {
    const addon = nativeAddon();
    const [readEnd, writeEnd] = addon.pipe();
    const devNull = openSync('/dev/null', 'r');
    let outer: { pid: number; pidfd: number };
    try {
      outer = addon.spawn({
        path: INIT_PATH,
        argv: ['hive-task-init', ...initArguments(this.plan)],
        env: [],
        cwd: '/',
        fds: [devNull, writeEnd, 2],
      });
    } catch (error) {
      addon.close(readEnd);
      this.why = `hive-task-init could not be started: ${(error as Error).message}`;
      return;
    } finally {
      addon.close(writeEnd);
      closeSync(devNull);
    }
    const output = new Socket({ fd: readEnd, readable: true, writable: false });
    let answer!: (line: string) => void;
    const first = new Promise<string>((resolve) => (answer = resolve));
    const notes: InitNotes = { ...NO_NOTES };
    readLines(output, (line) => (line.startsWith('note ') ? takeNote(notes, line.slice(5)) : answer(line)));
    output.on('error', () => {}); // 'close' follows
    // Once closed (the outer process exited), its pidfd is reaped and closed: never signalled again.
    let gone = false;
    let reaped!: () => void;
    const outerGone = new Promise<void>((resolve) => (reaped = resolve));
    output.once('close', () => {
      gone = true;
      answer('error the init exited before it was ready');
      this.onOuterExit(outer.pidfd);
      reaped();
    });
    const line =
      (await withTimeout(first, INIT_READY_MS, null)) ?? `error its set-up took over ${INIT_READY_MS / 1000} s`;
    const ready = gone ? null : /^ready (\d+)$/.exec(line);
    if (ready === null) {
      this.why = describeInitError(gone && line.startsWith('ready') ? 'error the init died as it started' : line);
      if (!gone) addon.sendSignal(outer.pidfd, signalNumber('SIGKILL'));
      return;
    }
    const pid = Number(ready[1]);
    this.notes = notes;
    // The init is the outer process's child, unreaped while the outer lives: this pid is still it.
    let pidfd: number;
    try {
      pidfd = addon.pidfdOpen(pid);
    } catch (error) {
      this.why = `the init died as it started (${(error as Error).message})`;
      addon.sendSignal(outer.pidfd, signalNumber('SIGKILL'));
      return;
    }
    this.running = { outerPidfd: outer.pidfd, pid, pidfd, gone: outerGone };
  }

  /** The outer process exited: it is reaped; a running init has died, and a new one is made. */
  private onOuterExit(outerPidfd: number): void {
    const addon = nativeAddon();
    addon.reap(outerPidfd, 1);
    addon.close(outerPidfd);
    const lost = this.running;
    if (lost === null || lost.outerPidfd !== outerPidfd) return;
    this.running = null;
    // The pidfd is not closed: a spec on its way to a worker may still name it, and a reused
    // number would be joined instead. One fd per init that died.
    if (this.stopping) return;
    const why = `the tasks' init (pid ${lost.pid}) died, and every task in its namespace with it`;
    this.why = why;
    void this.startInit().then(() => this.onLost(why, this.running !== null));
  }
}

/** hive-task-init's options for `plan`. */
function initArguments(plan: NamespacePlan): string[] {
  return [
    ...plan.readOnly.flatMap((dir) => ['-r', dir]),
    ...plan.shown.flatMap((dir) => ['-s', dir]),
    ...plan.hidden.flatMap((file) => ['-h', file]),
    ...plan.hiddenDirs.flatMap((dir) => ['-H', dir]),
  ];
}

/** "error ERRNO CALL" from hive-task-init, in words. */
function describeInitError(line: string): string {
  const match = /^error (\d+) (.*)$/.exec(line);
  if (match === null) return line.replace(/^error /, '');
  const needsRoot = match[2]!.startsWith('unshare') && Number(match[1]) === 1 ? ' (needs root: CAP_SYS_ADMIN)' : '';
  return `${match[2]}: ${describeErrno(Number(match[1]))}${needsRoot}`;
}
