// Who made a call to the daemon: a process of one of its own tasks (and which), or one outside
// them; and what the operator lets a task ask (--tasks-may-call): `same-sandbox`, any call, and a
// run no wider than the caller's sandbox (task-sandbox.ts takes it as a floor); `off`, nothing:
// every request from a task, or from a process that may be one, is refused with 403.
//
// The connection's peer socket gives a process holding it (src/process/tcp-peer.ts): the first one
// found counts, since a socket that a task shares with another process (an outside one, another
// task) lends that process's rights to the task only with that process's help. A process
// is a task's when it is in a task's cgroup (cgroup mode) or descends from the daemon; its task is
// the one whose cgroup it is in, else whose shim (under Node's spawn, whose leader) it descends
// from. A task cannot change either: a sandboxed task cannot write the cgroup tree, and the kernel
// hands an orphan to the nearest subreaper (its shim) or to the tasks' init, both the daemon's
// descendants. Its environment (HIVE_BASH_RUN) is not asked: a task sets its own. A process that
// may be a task's whose task cannot be told (its shim is gone), or a socket that no process holds
// (closed, or in flight between processes), is `unknown`: the most restricted caller, refused. So is
// one no process is seen to hold whose caller has closed or half-closed it (a task's that exits
// right after sending), even where other clues would make it an outside one's: an outside client
// waits on its connection for the answer. A connection is looked up once, at the first call that
// asks (run; every request under `off`).
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { CallerUnknownError } from '../../errors.js';
import { join } from 'node:path';
import { cgroup2Mount, cgroupPathOf } from '../../process/cgroups.js';
import type { HostSetup } from '../../process/containment.js';
import { readProcessEntry, SHIM_PROCESS_NAME } from '../../process/process-table.js';
import { findCgroupById, isAlive, readAncestry } from './process-clues.js';
import type { Sandbox } from '../../shared/sandbox.js';
import {
  endsOf,
  findOwnSocketCgroup,
  findHolderOf,
  findPeerSocket,
  isLocalAddress,
  pidNamespaceOf,
  SCAN_FDS,
  type PeerHolder,
  type TcpEnds,
} from '../../process/tcp-peer.js';
import type { TaskRecord } from '../model/task.js';
import type { RunCaller } from '../tasks/task-sandbox.js';
import { widerThanFloor } from '../tasks/write-dirs.js';

export const TASKS_MAY_CALL = ['off', 'same-sandbox'] as const;
export type TasksMayCall = (typeof TASKS_MAY_CALL)[number];

/** How deep a cgroup is looked for in the whole cgroup2 mount (systemd's go about six deep). */
const MOUNT_DEPTH = 16;

export type Caller =
  | { kind: 'outside' }
  /**
   * A process of task `taskId` (the one holding the connection, `pid`; null: none seen, the socket
   * told by the task's cgroup it was made in), whose sandbox bounds what it may ask for.
   */
  | { kind: 'task'; taskId: string; sandbox: Sandbox | null; pid: number | null }
  /** Maybe a task's, and which one cannot be told: `why`, in words to finish "the call comes from ...". */
  | { kind: 'unknown'; why: string };

/** The live tasks, as the callers' lookup needs them. */
export interface TaskLookup {
  /** The live task whose run key (its cgroup's name) is `runKey`. */
  recordOfRun(runKey: string): TaskRecord | null;
  /** The live task whose process tree is rooted at host pid `pid`. */
  recordRootedAt(pid: number): TaskRecord | null;
}

const OUTSIDE: Caller = { kind: 'outside' };

export class TaskCallers {
  private readonly known = new WeakMap<Socket, Caller>();
  /** Task cgroups' path beneath the cgroup2 mount, then `/task-` (`/hive-bash-daemon/state-HASH/task-`); null without. */
  private readonly cgroupPrefix: string | null;

  /** The folder of the task cgroups, where tasks have them; null without. */
  private readonly cgroupRoot: string | null;
  /** The cgroup2 mount that holds it; null without. */
  private readonly cgroupMount: string | null;
  /** The tasks' namespace, whose init is one of the daemon's helpers. */
  private readonly namespace: HostSetup['namespace'];

  /**
   * `tokenHidden`: every request carries the daemon's token (--auth-token-file), which no task can
   * read (it is hidden in the tasks' namespace).
   */
  constructor(
    private readonly tasks: TaskLookup,
    hostSetup: HostSetup,
    private readonly tasksMayCall: TasksMayCall,
    private readonly log: Logger,
    private readonly tokenHidden: boolean,
  ) {
    this.namespace = hostSetup.namespace;
    const mount = hostSetup.cgroupRoot === null ? null : cgroup2Mount();
    const inMount = mount !== null && hostSetup.cgroupRoot!.startsWith(`${mount}/`);
    this.cgroupPrefix = inMount ? `${hostSetup.cgroupRoot!.slice(mount.length)}/task-` : null;
    this.cgroupRoot = inMount ? hostSetup.cgroupRoot : null;
    this.cgroupMount = inMount ? mount : null;
  }

  /**
   * Who made the request `from`: the one question tool handlers (`context.callers.of(from)`) and the
   * HTTP layer (`routes.callers.of(req)`) ask. `outside`: a process outside the daemon's tasks;
   * `task`: process `pid` of live task `taskId`, whose sandbox is `sandbox` (null: none); `unknown`:
   * maybe a task's, whose task cannot be told (`why`), to be treated as the most restricted caller:
   * refuse it whatever a task may not do. Looked up at the connection's first ask (sock_diag, then an
   * fd scan: about 1 ms of this thread), synchronously, then remembered for its later requests.
   * Never throws.
   */
  of(from: IncomingMessage): Caller {
    return this.ofSocket(from.socket);
  }

  /**
   * Whether connection `socket` is one of a task's, or may be (an `unknown` caller); null when it
   * was not looked up yet and `lookUp` is false (the connection table's TaskConnection).
   */
  fromTask(socket: Socket, lookUp: boolean): boolean | null {
    const caller = lookUp ? this.ofSocket(socket) : this.known.get(socket);
    return caller === undefined ? null : caller.kind !== 'outside';
  }

  private ofSocket(socket: Socket): Caller {
    let caller = this.known.get(socket);
    if (caller === undefined) {
      caller = this.identify(socket);
      this.known.set(socket, caller);
      if (caller.kind === 'unknown')
        this.log.warn(
          { caller: caller.why },
          'cannot tell which task, if any, made a call: it is refused as the most restricted caller',
        );
      else if (caller.kind === 'task') this.log.debug({ task: caller.taskId, pid: caller.pid }, 'a call from a task');
    }
    return caller;
  }

  /**
   * Which of the daemon's tasks request `req` comes from, in words (`process 412 of task task-3`, or
   * why that cannot be told, which counts as a task); null: from outside the daemon's tasks.
   */
  taskCallerOf(req: IncomingMessage): string | null {
    const caller = this.of(req);
    if (caller.kind === 'outside') return null;
    if (caller.kind === 'unknown') return caller.why;
    return caller.pid === null
      ? `a socket made in the cgroup of task ${caller.taskId}`
      : `process ${caller.pid} of task ${caller.taskId}`;
  }

  /** Why --tasks-may-call refuses request `req` (off: it comes from a task, or may); null: it does not (no lookup under same-sandbox). */
  refusal(req: IncomingMessage): string | null {
    if (this.tasksMayCall !== 'off') return null;
    const from = this.taskCallerOf(req);
    if (from === null) return null;
    return `Forbidden: this request comes from ${from}, and this daemon takes no requests from its own tasks (--tasks-may-call off)`;
  }

  private identify(socket: Socket): Caller {
    const ends = endsOf(socket);
    if (ends === null) return unknown('a connection its caller has closed');
    const { remoteAddress } = ends;
    let peer: PeerHolder | null;
    try {
      const socket = findPeerSocket(ends);
      const byCgroup =
        socket === null || socket.cgroupId === null ? undefined : this.callerOfCgroupAlone(socket.cgroupId);
      if (byCgroup !== undefined) return byCgroup;
      const init = this.namespace.describe().init_pid;
      peer = socket === null ? null : findHolderOf(socket, ends, init === null ? null : pidNamespaceOf(init));
    } catch (error) {
      return unknown(`a connection whose peer could not be looked up (${(error as Error).message})`);
    }
    // Not in this namespace's tables: another host's, or a local one gone at once (reset by its caller).
    if (peer === null)
      return isLocalAddress(remoteAddress) ? unknown('a connection its caller has reset and left') : OUTSIDE;
    if (peer.holder !== null) return this.callerOfProcess(peer.holder);
    const caller = this.callerOfUnheld(peer, ends);
    // No one waits on a socket its caller closed for the answer: a task's that exited right after sending may be.
    return caller.kind === 'outside' && peer.closed ? CLOSED : caller;
  }

  /**
   * A socket that no process this daemon can read holds: held by one it may not look into (another
   * user's, or one that is not dumpable), closed, in flight between processes (a task's may be: it
   * passes its own socket to itself, and holds it again once the answer is there), or held in a PID
   * namespace it cannot see into (a client in another container that shares its network, or on the
   * host of the daemon's container). Where tasks have cgroups of their own, the cgroup its maker was
   * in tells. Else a process it may not look into tells only that it is a task's, never that it is
   * an outside one (the socket may be in flight, held by none); a socket made outside the cgroup
   * the tasks share, or by another user than the one every task runs as, is an outside one's; and
   * so is one whose requests carry the token, which no task can read.
   */
  private callerOfUnheld(peer: PeerHolder, ends: TcpEnds): Caller {
    const byCgroup = peer.cgroupId === null ? undefined : this.callerOfCgroup(peer.cgroupId, ends);
    if (byCgroup !== undefined && this.cgroupRoot !== null) return byCgroup;
    const unreadable = peer.unreadable.filter((pid) => !this.isOwnHelper(pid));
    // One that exited since the scan held the socket no longer (what it passed on, a child holds).
    const callers = unreadable.map((pid) => this.callerOfProcess(pid)).filter((_, i) => isAlive(unreadable[i]!));
    const inside = callers.filter((caller) => caller.kind !== 'outside');
    if (inside.length > 0) return joinCallers(inside);
    if (byCgroup !== undefined) return byCgroup;
    if (this.madeByAnotherUser(peer)) return OUTSIDE;
    if (this.tokenHidden) return OUTSIDE;
    if (peer.cut)
      return unknown(
        `a connection whose holder is not among the processes outside the tasks nor in the first ${SCAN_FDS} fd folders and links of tasks' processes a lookup reads (they hold more), and which neither the cgroup it was made in, its maker's user nor a token tells from a task's: give the daemon --auth-token-file, which no task can read, and its clients the token`,
      );
    return unknown(
      "a connection whose calling end no process this daemon can see holds: a client in a PID namespace it cannot see into (another container sharing its network, or the host of its own container), one it may not look into, or a socket a task closed or passed on; neither the cgroup it was made in (tasks have no cgroup of their own here) nor its maker's user can tell which, nor a token: give the daemon --auth-token-file, which no task can read, and such a client the token",
    );
  }

  /**
   * Whether socket `peer` was made by a user that no task can be: every task runs as the daemon's
   * user, and one that is not root cannot give a task another (the tasks' user namespace maps its
   * ids alone).
   */
  private madeByAnotherUser(peer: PeerHolder): boolean {
    const uid = process.geteuid!();
    return uid !== 0 && peer.uid !== null && peer.uid !== uid;
  }

  /**
   * Where tasks have cgroups of their own, who made the connection's calling end when its cgroup
   * (`id`, from the sock_diag lookup the fd scan starts from) alone tells, with no process read: a
   * live task's cgroup (or one within it), that task; a cgroup outside the tasks' folder, an
   * outside caller (no task can make a socket there). Else undefined: the fd scan tells. Before, the scan came first, and processes outside the tasks were read in
   * full: 50 of them holding 19,800 fds each held the main thread 7.5 s at a connection's first call.
   */
  private callerOfCgroupAlone(id: bigint): Caller | undefined {
    if (this.cgroupRoot === null) return undefined;
    const owner = this.cgroupOwner(id);
    return 'kind' in owner ? owner : undefined;
  }

  /**
   * Where tasks have cgroups of their own, whose cgroup `id` is: a live task's (or within one), an
   * outside one's (elsewhere in the mount), gone, or under the tasks' folder and of no task held.
   */
  private cgroupOwner(id: bigint): Caller | { gone: true } | { unowned: string } {
    const path = findCgroupById(this.cgroupRoot!, id);
    if (path === null) return findCgroupById(this.cgroupMount!, id, MOUNT_DEPTH) === null ? { gone: true } : OUTSIDE;
    const runKey = /^task-([^/]+)/.exec(path)?.[1];
    const record = runKey === undefined ? null : this.tasks.recordOfRun(runKey);
    return record === null ? { unowned: join(this.cgroupRoot!, path) } : taskCaller(record, null);
  }

  /**
   * Whose socket is one made in cgroup `id`: a task's where it is a task's cgroup (or within one),
   * from outside where it is another that is there, and unknown where it is gone (the cgroup of a
   * task that ended, removed; a task may hold its socket); where tasks share the daemon's cgroup,
   * from outside where it is another, and undefined (it cannot be said) where it is that one.
   */
  private callerOfCgroup(id: bigint, ends: TcpEnds): Caller | undefined {
    if (this.cgroupRoot !== null) {
      const owner = this.cgroupOwner(id);
      if ('kind' in owner) return owner;
      // One found nowhere is gone: an ended task's, whose socket a task may hold (or have in flight).
      return 'gone' in owner
        ? unknown(
            "a socket made in a cgroup that is gone (an ended task's, maybe), which no process this daemon can see holds",
          )
        : unknown(`a socket made in the cgroup ${owner.unowned}, of no task this daemon holds`);
    }
    // Tasks share the daemon's cgroup (its own end of the connection was made in it): a socket made
    // there may be a task's; one made elsewhere is not.
    const shared = findOwnSocketCgroup(ends);
    return shared === null || id === shared ? undefined : OUTSIDE;
  }

  /** Whether `pid` is one of the daemon's own helpers: its child (a spawner, the init's outer process), the tasks' init, or a task's shim. */
  private isOwnHelper(pid: number): boolean {
    if (pid === this.namespace.describe().init_pid) return true;
    const entry = readProcessEntry(pid);
    if (entry === null) return false;
    return entry.ppid === process.pid || (entry.name === SHIM_PROCESS_NAME && this.tasks.recordRootedAt(pid) !== null);
  }

  /** Whose process `pid` is: by its cgroup where tasks have one, else by the processes it descends from. */
  private callerOfProcess(pid: number): Caller {
    const path = this.cgroupPrefix === null ? null : cgroupPathOf(pid);
    if (path?.startsWith(this.cgroupPrefix!)) {
      const runKey = path.slice(this.cgroupPrefix!.length).split('/')[0]!;
      const record = this.tasks.recordOfRun(runKey);
      return record === null
        ? unknown(`process ${pid}, in the cgroup of a task this daemon no longer holds`)
        : taskCaller(record, pid);
    }
    const ancestry = readAncestry(pid);
    if (ancestry === null) return unknown(`process ${pid}, which exited or lost its parent while it was looked up`);
    if (!ancestry.includes(process.pid)) return OUTSIDE;
    for (const ancestor of ancestry) {
      const record = this.tasks.recordRootedAt(ancestor);
      if (record !== null) return taskCaller(record, pid);
    }
    return unknown(
      `process ${pid}, which descends from the daemon's tasks but from no task it holds (its shim is gone)`,
    );
  }
}

/** The task a call of `tool` comes from, whose sandbox bounds it; null from outside the tasks. Refuses a caller that cannot be told. */
export function runCallerOf(caller: Caller, tool = 'run'): RunCaller | null {
  if (caller.kind === 'outside') return null;
  if (caller.kind === 'unknown') throw new CallerUnknownError(tool, caller.why);
  return { taskId: caller.taskId, sandbox: caller.sandbox };
}

/**
 * What task `target` (its sandbox, null: none) may do beyond the sandbox of task `caller`, which
 * asks to drive it (its stdin), in words; null: nothing. Input runs as the task that reads it, so a
 * sandboxed task may drive only tasks confined at least as narrowly as itself.
 */
export function beyondCallerSandbox(target: Sandbox | null, caller: RunCaller): string | null {
  if (caller.sandbox === null) return null;
  if (target === null) return 'it runs with no sandbox';
  const writeDirs = target.write.map((dir) => ({ given: dir, resolved: dir, field: 'its sandbox.write' }));
  return widerThanFloor(writeDirs, target.network, caller.sandbox);
}

const unknown = (why: string): Caller => ({ kind: 'unknown', why });

const CLOSED = unknown('a connection its caller closed or half-closed as soon as it had sent, which no process holds');

const taskCaller = (record: TaskRecord, pid: number | null): Caller => ({
  kind: 'task',
  taskId: record.id,
  sandbox: record.sandbox,
  pid,
});

/** One of several processes of tasks (that this daemon may not look into) may hold the connection: two tasks' cannot be told apart. */
function joinCallers(inside: Caller[]): Caller {
  const unknownOne = inside.find((caller) => caller.kind === 'unknown');
  if (unknownOne !== undefined) return unknownOne;
  const ids = new Set(inside.map((caller) => (caller.kind === 'task' ? caller.taskId : '')));
  if (ids.size === 1) return inside[0]!;
  return unknown(`a connection held by a process of one of several tasks (${[...ids].join(', ')})`);
}
