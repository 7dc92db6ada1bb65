// How many HTTP connections the daemon holds, in all and per peer, and which one is closed to make
// room for a new one: clients that open connections and send nothing, or their headers a line at a
// time, cannot lock a well-behaved client out, and never run the daemon out of file descriptors;
// nor can one of the daemon's own tasks that holds every connection with a request in flight (a
// status wait of 30 s, sent again when answered: 892 of 922 /healthz probes failed before), nor
// another user's processes doing the same from outside the tasks. A flood by the processes of the
// newcomer's own user is not told from that user's other clients: those processes may end the
// daemon anyway (docs/http.md).
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  total: number;
  perPeer: number;
}

interface Connection {
  peer: string;
  /** Requests received whole and not answered yet: while one is, the connection is not closed to make room. */
  inFlight: number;
  /** The user whose process made its calling end, once looked up (null: it cannot be told). */
  user?: number | null;
}

/**
 * Who a connection is from, for the limits per peer: its remote address, an IPv4 address mapped
 * into IPv6 written as IPv4. Every local client is 127.0.0.1 unless it binds another address of
 * 127.0.0.0/8, which any local process may do, so on loopback the limits per peer bound the local
 * clients together, and what keeps a local flood from locking others out is the order below.
 */
export function peerOf(socket: Socket): string {
  const address = socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

/**
 * Whether a connection's caller is one of the daemon's tasks, or may be (TaskCallers, which looks a
 * connection up once); null when it was not looked up and `lookUp` is false.
 */
export type TaskConnection = (socket: Socket, lookUp: boolean) => boolean | null;

/** The uid of the process that made a connection's calling end (sock_diag, src/process/tcp-peer.ts), or null: not on this host, or not told. */
export type ConnectionUser = (socket: Socket) => number | null;

/**
 * Connections looked up, at most, each time room is wanted: a lookup reads /proc, and a task's
 * flood, being most of what is open, is found at the first (each connection is looked up once).
 */
const LOOKUPS_FOR_ROOM = 4;

export class ConnectionTable {
  private readonly open = new Map<Socket, Connection>();
  private readonly perPeer = new Map<string, number>();
  /**
   * Connections with no request in flight, in the order they go to make room: those answered and
   * being closed; then those that have not had a whole request yet, oldest first (a client that
   * sends nothing, or sends slowly, waits here); then those between requests, idle longest first.
   */
  private readonly closing = new Set<Socket>();
  private readonly unanswered = new Set<Socket>();
  private readonly idle = new Set<Socket>();
  private closedForRoom = 0;
  private cutFromTasks = 0;
  private cutFromUsers = 0;
  private refused = 0;

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly fromTask: TaskConnection = () => false,
    private readonly userOf: ConnectionUser = () => null,
  ) {}

  /**
   * For /healthz: connections open, closed to make room (`cut_from_tasks` of them with a task's
   * request in flight, `cut_from_users` with another user's), and closed at once for want of it.
   */
  counts(): { open: number; closed_for_room: number; cut_from_tasks: number; cut_from_users: number; refused: number } {
    return {
      open: this.open.size,
      closed_for_room: this.closedForRoom,
      cut_from_tasks: this.cutFromTasks,
      cut_from_users: this.cutFromUsers,
      refused: this.refused,
    };
  }

  /** Takes a new connection in, closing another to make room where a limit is reached; closes `socket` itself when none may go. */
  admit(socket: Socket): void {
    const peer = peerOf(socket);
    if (!this.makeRoom(peer, socket)) {
      this.refused++;
      socket.destroy();
      return;
    }
    this.open.set(socket, { peer, inFlight: 0 });
    this.perPeer.set(peer, (this.perPeer.get(peer) ?? 0) + 1);
    this.unanswered.add(socket);
    socket.once('close', () => this.forget(socket));
  }

  /** A request on `socket` arrived whole: the connection stays until it is answered. */
  requestReceived(socket: Socket): void {
    const connection = this.open.get(socket);
    if (!connection) return;
    connection.inFlight++;
    this.unanswered.delete(socket);
    this.idle.delete(socket);
  }

  /** A request on `socket` was answered, or given up. */
  requestAnswered(socket: Socket): void {
    const connection = this.open.get(socket);
    if (!connection || --connection.inFlight > 0 || this.closing.has(socket)) return;
    this.idle.add(socket);
  }

  /** `socket` was answered before its request was read and is being closed: the first to go when room is needed. */
  closingSoon(socket: Socket): void {
    if (!this.open.has(socket)) return;
    this.unanswered.delete(socket);
    this.idle.delete(socket);
    this.closing.add(socket);
  }

  private makeRoom(peer: string, socket: Socket): boolean {
    if ((this.perPeer.get(peer) ?? 0) >= this.limits.perPeer && !this.closeForRoom(peer, socket)) return false;
    return this.open.size < this.limits.total || this.closeForRoom(null, socket);
  }

  /**
   * Closes one connection (of `peer`, unless null) for new connection `socket`: one being closed;
   * else one of a task's; else the first in line of those that have not sent a whole request, then
   * of those idle; else, when every one has a request in flight, the newest of the user who holds
   * the most, if that user holds more than the newcomer's. A newcomer whose user holds the most
   * already makes room only among that user's own: its flood cannot close another user's connection
   * while it waits in line. False when none may go.
   */
  private closeForRoom(peer: string | null, socket: Socket): boolean {
    if (this.closeFirstOf(this.closing, peer) || this.cutTask(peer)) return true;
    const users = this.usersOf(peer, socket);
    const own = users !== null && users.newcomerHolds > 0 && users.newcomerHolds >= users.heaviest.count;
    const mayGo = (open: Socket) => !own || this.open.get(open)?.user === users.newcomer;
    if (this.closeFirstOf(this.unanswered, peer, mayGo) || this.closeFirstOf(this.idle, peer, mayGo)) return true;
    if (users === null || users.heaviest.newest === null || users.heaviest.count <= users.newcomerHolds) return false;
    this.cutFromUsers++;
    this.close(users.heaviest.newest);
    return true;
  }

  /**
   * Who holds the connections (of `peer`, unless null) by user: the newcomer `socket`'s user and how
   * many it holds, and the user who holds the most (other than the newcomer's) with its newest
   * connection; null when the newcomer's user cannot be told (a client on another host). Each
   * connection's user is looked up once (sock_diag: 512 took 11 ms here), and only here: past a limit.
   */
  private usersOf(
    peer: string | null,
    socket: Socket,
  ): { newcomer: number; newcomerHolds: number; heaviest: { count: number; newest: Socket | null } } | null {
    const newcomer = this.userOf(socket);
    if (newcomer === null) return null;
    const held = new Map<number, { count: number; newest: Socket | null }>();
    for (const [open, connection] of this.open) {
      if (peer !== null && connection.peer !== peer) continue;
      if (connection.user === undefined) connection.user = this.userOf(open);
      if (connection.user === null) continue;
      // The table is in the order connections came: the last one seen of a user is its newest.
      held.set(connection.user, { count: (held.get(connection.user)?.count ?? 0) + 1, newest: open });
    }
    let heaviest: { count: number; newest: Socket | null } = { count: 0, newest: null };
    for (const [user, holds] of held) if (user !== newcomer && holds.count > heaviest.count) heaviest = holds;
    return { newcomer, newcomerHolds: held.get(newcomer)?.count ?? 0, heaviest };
  }

  /**
   * Closes a connection of one of the daemon's tasks (of `peer`, unless null), a request in flight
   * or not, the newest first; false when none is found among those known and LOOKUPS_FOR_ROOM
   * looked up. Before any other: a task that keeps every connection (reconnecting as each is
   * closed) would otherwise close a new outside one before its request arrived whole. Calls in
   * flight go on as a caller's that hung up: the end of a task it waited for stays a todo. A
   * connection of a caller outside the tasks is never cut with its request in flight.
   */
  private cutTask(peer: string | null): boolean {
    let lookUps = LOOKUPS_FOR_ROOM;
    const newestFirst = [...this.open].reverse();
    for (const [socket, connection] of newestFirst) {
      if (peer !== null && connection.peer !== peer) continue;
      let task = this.fromTask(socket, false);
      if (task === null && lookUps > 0) {
        lookUps--;
        task = this.fromTask(socket, true);
      }
      if (task !== true) continue;
      if (connection.inFlight > 0) this.cutFromTasks++;
      this.close(socket);
      return true;
    }
    return false;
  }

  /** Closes the first connection of `line` (of `peer`, unless null) that `mayGo`; false when it has none. */
  private closeFirstOf(line: Set<Socket>, peer: string | null, mayGo = (_socket: Socket) => true): boolean {
    for (const socket of line) {
      if ((peer !== null && this.open.get(socket)?.peer !== peer) || !mayGo(socket)) continue;
      this.close(socket);
      return true;
    }
    return false;
  }

  private close(socket: Socket): void {
    this.forget(socket);
    socket.destroy();
    this.closedForRoom++;
  }

  private forget(socket: Socket): void {
    const connection = this.open.get(socket);
    if (!connection) return;
    this.open.delete(socket);
    this.closing.delete(socket);
    this.unanswered.delete(socket);
    this.idle.delete(socket);
    const left = (this.perPeer.get(connection.peer) ?? 1) - 1;
    if (left === 0) this.perPeer.delete(connection.peer);
    else this.perPeer.set(connection.peer, left);
  }
}
