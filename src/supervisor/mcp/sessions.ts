// The sessions of the 2025 era over streamable HTTP: one endpoint per session, opened by an
// initialize, swept when idle so that sessions clients open and abandon cost nothing for long.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { SessionEndpoint } from './session-endpoint.js';
import { isInitializeRequest } from './session-methods.js';
import { SESSION_NOT_FOUND, sendRpcError, transportRefusal } from './json-rpc.js';
import type { ToolRegistry } from './tool-registry.js';
import { peerOf } from '../http/connections.js';
import type { TaskPush } from './task-push.js';
import type { McpTasks } from './mcp-tasks.js';

const SWEEP_INTERVAL_MS = 1000;
/** A session used this recently is never closed to make room for a new one: the initialize is refused instead. */
export const SESSION_RECENT_MS = 60_000;

/** The flags sessions follow (client-limit-options.ts, config-options.ts). */
export type SessionSettings = Pick<Config, 'sessionIdleSeconds' | 'maxSessions' | 'maxSessionsPerPeer'>;

/** What the choice of a session to close needs of one. */
export interface SessionUse {
  /** When a request of it last started or ended (ms since the epoch). */
  lastSeen: number;
  /** POST requests in flight (a status call may wait 30 s) and its GET stream if open; a busy session is never closed. */
  active: number;
  /** Who opened it (peerOf its initialize's connection). */
  peer: string;
}

interface Session extends SessionUse {
  endpoint: SessionEndpoint;
}

/**
 * The session to close to make room (of `peer` unless null): the one used longest ago, if that was
 * SESSION_RECENT_MS or more before `now` and it has no request in flight. `sessions` is in order of
 * last use, oldest first.
 */
export function sessionToClose<T extends SessionUse>(
  sessions: Iterable<[string, T]>,
  now: number,
  peer: string | null,
): [string, T] | undefined {
  for (const entry of sessions) {
    const session = entry[1];
    if (session.lastSeen > now - SESSION_RECENT_MS) return undefined; // every later one is more recent
    if (session.active === 0 && (peer === null || session.peer === peer)) return entry;
  }
  return undefined;
}

export class SessionManager {
  /** In order of last use, oldest first: a session is moved to the end when a request of it starts and ends. */
  private readonly sessions = new Map<string, Session>();
  private readonly perPeer = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  private readonly idleMs: number;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly settings: SessionSettings,
    private readonly log: Logger,
    /** What tells a session's stream of the tasks it holds; null: nothing is pushed. */
    private readonly push: TaskPush | null = null,
    /** The MCP tasks a session's run may make (2025-11-25's Tasks utility); null: none are offered. */
    private readonly mcpTasks: McpTasks | null = null,
  ) {
    this.idleMs = settings.sessionIdleSeconds * 1000;
    this.timer = setInterval(() => this.sweep(), Math.min(SWEEP_INTERVAL_MS, this.idleMs)).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Serves one request to /mcp; `body` is the parsed JSON of a POST. */
  handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (session) return this.serve(sessionId, session, req, res, body);
      const unknown = `Session not found: ${sessionId} is unknown, or was closed (idle, or to make room for newer sessions); initialize a new session`;
      return Promise.resolve(sendRpcError(res, transportRefusal(404, unknown, SESSION_NOT_FOUND)));
    }
    // A request, not a notification: only an answer can tell the client its session's id.
    if (req.method === 'POST' && isInitializeRequest(body)) return this.open(req, res, body);
    const first = 'Bad Request: send an initialize request first, then the Mcp-Session-Id header it returns';
    return Promise.resolve(sendRpcError(res, transportRefusal(400, first)));
  }

  private async open(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const peer = peerOf(req.socket);
    const full = this.makeRoom(peer);
    if (full) return sendRpcError(res, transportRefusal(full.status, full.message), null, ['retry-after', '60']);
    const endpoint = new SessionEndpoint(randomUUID(), this.registry, this.log, this.push, this.mcpTasks);
    // Held (and busy) while it opens, so that initializes at once cannot pass the limits together.
    const session: Session = { endpoint, lastSeen: Date.now(), active: 1, peer };
    this.add(endpoint.sessionId, session);
    endpoint.onclose = () => {
      if (this.sessions.get(endpoint.sessionId) === session) this.remove(endpoint.sessionId, session);
    };
    try {
      await endpoint.handleRequest(req, res, body);
    } finally {
      session.active--;
      // Known to the client only from the answer just sent; a refused initialize leaves no session.
      if (!endpoint.initialized) await endpoint.close();
    }
  }

  private async serve(
    id: string,
    session: Session,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<void> {
    this.touch(id, session);
    // A GET stream held open keeps its session busy: never idle, never closed to make room.
    const counted = req.method === 'POST' || req.method === 'GET';
    if (counted) session.active++;
    try {
      await session.endpoint.handleRequest(req, res, body);
    } finally {
      if (counted) {
        session.active--;
        if (this.sessions.get(id) === session) this.touch(id, session);
      }
    }
  }

  private touch(id: string, session: Session): void {
    this.sessions.delete(id);
    this.sessions.set(id, session);
    session.lastSeen = Date.now();
  }

  private sweep(): void {
    const idleBefore = Date.now() - this.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen > idleBefore) break;
      if (session.active === 0) this.close(id, session, 'idle');
    }
  }

  /**
   * Where a limit is reached, closes the session used longest ago (of the peer, for its limit) to
   * make room for one more from `peer`; when every one was used within SESSION_RECENT_MS, none is
   * closed and the refusal is returned instead.
   */
  private makeRoom(peer: string): { status: number; message: string } | null {
    const now = Date.now();
    const seconds = SESSION_RECENT_MS / 1000;
    if ((this.perPeer.get(peer) ?? 0) >= this.settings.maxSessionsPerPeer) {
      const victim = sessionToClose(this.sessions, now, peer);
      if (!victim)
        return {
          status: 429,
          message: `Too many MCP sessions from ${peer}: it holds ${this.settings.maxSessionsPerPeer} (--max-sessions-per-peer), each used within the last ${seconds} s, so none was closed for a new one; reuse a session, end one you no longer need (DELETE /mcp with its Mcp-Session-Id), or initialize again later`,
        };
      this.close(...victim, 'too many sessions from its peer');
    }
    if (this.sessions.size >= this.settings.maxSessions) {
      const victim = sessionToClose(this.sessions, now, null);
      if (!victim)
        return {
          status: 503,
          message: `Too many MCP sessions: ${this.settings.maxSessions} are open (--max-sessions), each used within the last ${seconds} s, so none was closed for a new one; reuse a session, end one you no longer need (DELETE /mcp with its Mcp-Session-Id), or initialize again later`,
        };
      this.close(...victim, 'too many sessions');
    }
    return null;
  }

  private add(id: string, session: Session): void {
    this.sessions.set(id, session);
    this.perPeer.set(session.peer, (this.perPeer.get(session.peer) ?? 0) + 1);
  }

  private remove(id: string, session: Session): void {
    this.sessions.delete(id);
    const left = (this.perPeer.get(session.peer) ?? 1) - 1;
    if (left === 0) this.perPeer.delete(session.peer);
    else this.perPeer.set(session.peer, left);
  }

  private close(id: string, session: Session, why: string): void {
    this.remove(id, session);
    this.log.debug({ session: id, why }, 'closing MCP session');
    session.endpoint.close().catch((error: Error) => this.log.warn({ err: error }, 'closing an MCP session failed'));
  }

  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    this.perPeer.clear();
    await Promise.allSettled(sessions.map((session) => session.endpoint.close()));
  }
}
