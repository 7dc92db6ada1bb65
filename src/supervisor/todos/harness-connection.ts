// One connection to the harness's unix socket, kept up for as long as the daemon runs: it
// reconnects with capped exponential backoff and hands each answer line to its owner.
import { createConnection, type Socket } from 'node:net';
import type { Logger } from 'pino';
import { readLines } from '../../shared/line-reader.js';
import { Backoff } from './backoff.js';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;
/** A connection that lasted this long was healthy: the next one is tried at once after it closes. */
const HEALTHY_CONNECTION_MS = 1000;
/** An answer line longer than this is no answer: the connection is dropped instead of buffering forever. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface ConnectionEvents {
  onOpen(): void;
  onLine(line: string): void;
  /** The connection is gone; requests without an answer will not get one. */
  onClose(): void;
}

export class HarnessConnection {
  private socket: Socket | null = null;
  private open = false;
  private stopped = false;
  private readonly backoff = new Backoff(RECONNECT_MIN_MS, RECONNECT_MAX_MS);
  private timer: NodeJS.Timeout | null = null;
  /** Set once an outage has been logged, so that a long one is one line, not one per attempt. */
  private outageLogged = false;

  constructor(
    private readonly path: string,
    private readonly events: ConnectionEvents,
    private readonly log: Logger,
  ) {}

  get connected(): boolean {
    return this.open;
  }

  start(): void {
    this.connect();
  }

  /** Writes one request line; false when there is no connection to write it on. */
  send(line: string): boolean {
    if (!this.open || !this.socket) return false;
    this.socket.write(`${line}\n`);
    return true;
  }

  /** Drops the connection (a harness that stopped answering); a new one follows after the backoff. */
  drop(reason: string): void {
    this.log.warn({ socket: this.path, reason }, 'dropping the harness connection');
    this.socket?.destroy();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.socket?.destroy();
  }

  private connect(): void {
    this.timer = null;
    const socket = createConnection(this.path);
    this.socket = socket;
    let healthy = false;
    socket.on('connect', () => {
      this.open = true;
      setTimeout(() => (healthy = true), HEALTHY_CONNECTION_MS).unref();
      this.outageLogged = false;
      this.log.info({ socket: this.path }, 'connected to the harness');
      this.events.onOpen();
    });
    readLines(
      socket,
      (line) => {
        healthy = true;
        this.events.onLine(line);
      },
      MAX_ANSWER_BYTES,
      () => this.drop(`an answer line longer than ${MAX_ANSWER_BYTES} bytes`),
    );
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (this.open)
        return void this.log.warn(
          { socket: this.path, code: error.code, err: error.message },
          'the harness connection failed',
        );
      if (this.outageLogged) return;
      this.outageLogged = true;
      this.log.warn(
        { socket: this.path, code: error.code, err: error.message },
        'the harness socket is unreachable; todos wait in the outbox',
      );
    });
    socket.on('close', () => this.onClose(socket, healthy));
  }

  private onClose(socket: Socket, healthy: boolean): void {
    if (this.socket !== socket) return;
    const wasOpen = this.open;
    this.open = false;
    this.socket = null;
    if (wasOpen) {
      if (!this.stopped) this.log.warn({ socket: this.path }, 'the harness connection closed; reconnecting');
      this.events.onClose();
    }
    if (this.stopped) return;
    // After a healthy connection, come back quickly; a harness that is down, or accepts and hangs up, backs off.
    if (healthy) this.backoff.reset();
    this.timer = setTimeout(() => this.connect(), this.backoff.next());
  }
}
