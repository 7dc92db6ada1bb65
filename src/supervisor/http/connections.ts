// How many HTTP connections the daemon holds, in all and per peer, and which one is closed to make
// room for a new one: clients that open connections and send nothing, or their headers a line at a
// time, cannot lock a well-behaved client out, and never run the daemon out of file descriptors;
// nor can one of the daemon's own tasks that holds every connection with a request in flight (a
// status wait of 30 s, sent again when answered: 892 of 922 /healthz probes failed before).
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  total: number;
  perPeer: number;
}

interface Connection {
  peer: string;
  /** Requests received whole and not answered yet: while one is, the connection is not closed to make room. */
  inFlight: number;
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
  private refused = 0;

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly fromTask: TaskConnection = () => false,
  ) {}

  /** For /healthz: connections open, closed to make room (`cut_from_tasks` of them with a task's request in flight), and closed at once for want of it. */
  counts(): { open: number; closed_for_room: number; cut_from_tasks: number; refused: number } {
    return {
      open: this.open.size,
      closed_for_room: this.closedForRoom,
      cut_from_tasks: this.cutFromTasks,
      refused: this.refused,
    };
  }

  /** Takes a new connection in, closing another to make room where a limit is reached; closes `socket` itself when none may go. */
  admit(socket: Socket): void {
    const peer = peerOf(socket);
    if (!this.makeRoom(peer)) {
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

  private makeRoom(peer: string): boolean {
    if ((this.perPeer.get(peer) ?? 0) >= this.limits.perPeer && !this.closeForRoom(peer)) return false;
    return this.open.size < this.limits.total || this.closeForRoom(null);
  }

  /**
   * Closes one connection (of `peer`, unless null) for a new one: one being closed; else one of a
   * task's; else the first in line of those that have not sent a whole request, then of those
   * idle. False when none may go.
   */
  private closeForRoom(peer: string | null): boolean {
    return (
      this.closeFirstOf(this.closing, peer) ||
      this.cutTask(peer) ||
      this.closeFirstOf(this.unanswered, peer) ||
      this.closeFirstOf(this.idle, peer)
    );
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

  /** Closes the first connection of `line` (of `peer`, unless null); false when it has none. */
  private closeFirstOf(line: Set<Socket>, peer: string | null): boolean {
    for (const socket of line) {
      if (peer !== null && this.open.get(socket)?.peer !== peer) continue;
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
