// Stateful MCP sessions over streamable HTTP: one server and transport per session, swept when idle
// so that sessions clients open and abandon cost nothing for long.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { JsonHttpTransport, sendJsonRpcError } from './json-transport.js';
import type { ToolRegistry } from './server.js';
import { directAnswerer, type DirectAnswerer } from './direct-calls.js';

const SWEEP_INTERVAL_MS = 1000;
/** Beyond this many sessions the least recently used idle one is closed for each new one. */
export const MAX_SESSIONS = 1000;

interface Session {
  transport: JsonHttpTransport;
  lastSeen: number;
  /** POST requests in flight (a status call may wait 30 s); a busy session is never swept. */
  active: number;
}

export class SessionManager {
  /** In order of last use, oldest first: a touched session is moved to the end. */
  private readonly sessions = new Map<string, Session>();
  private readonly timer: NodeJS.Timeout;
  /** tools/call and ping in their plain shape, answered without the SDK's protocol layer. */
  private readonly direct: DirectAnswerer;

  constructor(
    private readonly registry: ToolRegistry,
    private readonly idleMs: number,
    private readonly log: Logger,
  ) {
    this.direct = directAnswerer((name, args, from) => registry.call(name, args, from));
    this.timer = setInterval(() => this.sweep(), Math.min(SWEEP_INTERVAL_MS, idleMs)).unref();
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Serves one request to /mcp; `body` is the parsed JSON of a POST. */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = this.sessions.get(sessionId);
      if (!session)
        return sendJsonRpcError(
          res,
          404,
          -32001,
          `Session not found: ${sessionId} is unknown or was closed after being idle; initialize a new session`,
        );
      return this.serve(sessionId, session, req, res, body);
    }
    // A request, not a notification: only an answer can tell the client its session's id.
    if (req.method === 'POST' && (body as { id?: unknown } | null)?.id !== undefined) {
      // The SDK (loaded with the first session) checks that it is an initialize request.
      const { isInitializeRequest } = await import('@modelcontextprotocol/sdk/types.js');
      if (isInitializeRequest(body)) return this.open(req, res, body);
    }
    sendJsonRpcError(
      res,
      400,
      -32000,
      'Bad Request: send an initialize request first, then the Mcp-Session-Id header it returns',
    );
  }

  private async open(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    this.evictOverflow();
    const { SUPPORTED_PROTOCOL_VERSIONS } = await import('@modelcontextprotocol/sdk/types.js');
    const transport = new JsonHttpTransport(randomUUID(), SUPPORTED_PROTOCOL_VERSIONS, this.direct);
    const session: Session = { transport, lastSeen: Date.now(), active: 0 };
    transport.onclose = () => {
      if (this.sessions.get(transport.sessionId) === session) this.sessions.delete(transport.sessionId);
    };
    await (await this.registry.createServer()).connect(transport);
    await transport.handleRequest(req, res, body);
    // Known to the client only from the answer just sent; a refused initialize leaves no session.
    if (transport.initialized) this.sessions.set(transport.sessionId, session);
    else await transport.close();
  }

  private async serve(
    id: string,
    session: Session,
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
  ): Promise<void> {
    this.sessions.delete(id);
    this.sessions.set(id, session);
    session.lastSeen = Date.now();
    const counted = req.method === 'POST';
    if (counted) session.active++;
    try {
      await session.transport.handleRequest(req, res, body);
    } finally {
      if (counted) {
        session.active--;
        session.lastSeen = Date.now();
      }
    }
  }

  private sweep(): void {
    const idleBefore = Date.now() - this.idleMs;
    for (const [id, session] of this.sessions) {
      if (session.lastSeen > idleBefore) break;
      if (session.active === 0) this.close(id, session, 'idle');
    }
  }

  private evictOverflow(): void {
    for (const [id, session] of this.sessions) {
      if (this.sessions.size < MAX_SESSIONS) return;
      if (session.active === 0) this.close(id, session, 'too many sessions');
    }
  }

  private close(id: string, session: Session, why: string): void {
    this.sessions.delete(id);
    this.log.debug({ session: id, why }, 'closing MCP session');
    session.transport.close().catch((error: Error) => this.log.warn({ err: error }, 'closing an MCP session failed'));
  }

  async closeAll(): Promise<void> {
    clearInterval(this.timer);
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(sessions.map((session) => session.transport.close()));
  }
}
