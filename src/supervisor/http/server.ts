// The HTTP surface: /mcp (MCP streamable HTTP, each POST to the era it is of), /healthz, /metrics and /todos, behind the request guard.
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { SessionManager } from '../mcp/sessions.js';
import { isStatelessRequest } from '../mcp/protocol-versions.js';
import type { StatelessEndpoint } from '../mcp/stateless-endpoint.js';
import {
  INTERNAL_ERROR,
  INVALID_REQUEST,
  parseBody,
  responseOf,
  RpcError,
  sendJson,
  sendRpcError,
  transportRefusal,
} from '../mcp/json-rpc.js';
import type { Config } from '../config/config.js';
import type { DaemonMetrics } from '../metrics.js';
import { peerUserOf } from '../../process/tcp-peer.js';
import { ConnectionTable } from './connections.js';
import { UnsentAnswers } from './unsent-answers.js';
import type { RequestGuard } from './guard.js';
import type { OperatorRoutes } from './operator-routes.js';
import type { TaskCallers } from '../callers/task-callers.js';

/** A run's command is at most 256 KiB; JSON escaping can grow it sixfold. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * Bodies being read or answered hold at most this much in all: one more is refused (503), so that
 * half-sent bodies, or requests parked in a wait or a stream, cannot hold gigabytes. A body parsed
 * takes about three times its size: 64 requests of 4 MiB parked in status's wait took the daemon
 * from 106 to 879 MB when only bodies being read were counted.
 */
const MAX_BODIES_BYTES = 32 * 1024 * 1024;
/** How often node:http looks for requests past their headers or request timeout (its default, 30 s, would let them stay that much longer). */
const TIMEOUT_CHECK_MS = 1000;
/** How long a connection answered before its request was read stays half closed before it is destroyed (answerAndClose). */
const LINGER_MS = 500;
const BUSY = Symbol('busy');
const BODIES_BUSY = `Service unavailable: the bodies of requests being read or answered hold ${MAX_BODIES_BYTES / 1024 / 1024} MiB in all; send this one again in a moment`;
const NO_OAUTH =
  'Not found: this daemon has no OAuth; when it runs with --auth-token-file, send Authorization: Bearer TOKEN with the token from that file';
const NO_STREAM =
  'Method not allowed: POST to /mcp; this server answers every request in its POST response, and offers a GET stream only to a 2025 session (with its Mcp-Session-Id)';

/** The flags this layer applies (client-limit-options.ts): connections, and the time a request may take to arrive. */
export type HttpLimits = Pick<
  Config,
  'maxConnections' | 'maxConnectionsPerPeer' | 'headersTimeoutSeconds' | 'requestTimeoutSeconds'
>;

export interface HttpRoutes {
  guard: RequestGuard;
  limits: HttpLimits;
  /** Who sent a request (one of the daemon's own tasks, or not), and whether --tasks-may-call refuses it. */
  callers: TaskCallers;
  /** The 2025-11-25 era and before: initialize, then a session. */
  sessions: SessionManager;
  /** The 2026-07-28 era: every request on its own. */
  stateless: StatelessEndpoint;
  health(): object;
  /** The outbox and the harness connection, for the operator. */
  todos(): object;
  /** The command policy and the execs that wait for a person, for the operator. */
  operator: OperatorRoutes;
  metrics: DaemonMetrics;
  log: Logger;
}

/** The routes, and the connections open (which one makes room for a new one). */
interface HttpSurface extends HttpRoutes {
  connections: ConnectionTable;
  /** Answers written and not yet taken by their clients. */
  unsent: UnsentAnswers;
  /** Each connection's request being served: the next one waits for it. */
  turns: WeakMap<Socket, Promise<void>>;
  /** Bytes of bodies read and not yet whole, over every connection. */
  bodies: { held: number };
}

export function createHttpServer(routes: HttpRoutes): Server {
  const { limits } = routes;
  const surface: HttpSurface = {
    ...routes,
    connections: new ConnectionTable(
      { total: limits.maxConnections, perPeer: limits.maxConnectionsPerPeer },
      (socket, lookUp) => routes.callers.fromTask(socket, lookUp),
      peerUserOf,
    ),
    bodies: { held: 0 },
    unsent: new UnsentAnswers(),
    turns: new WeakMap(),
  };
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutSeconds * 1000,
      requestTimeout: limits.requestTimeoutSeconds * 1000,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    },
    (req, res) => {
      // One request of a connection at a time, the next once the answer before it was taken: a
      // client that sends many in one write (pipelined) gets them answered in order, as it would
      // anyway, and one that does not read has the daemon make no more than one answer for it.
      const turn = (surface.turns.get(req.socket) ?? Promise.resolve())
        .then(() => (req.socket.destroyed ? undefined : handle(surface, req, res)))
        .catch((error: Error) => {
          routes.log.error({ err: error, url: req.url }, 'request failed');
          if (!res.headersSent)
            sendRpcError(res, new RpcError(INTERNAL_ERROR, `internal error: ${error.message}`, undefined, 500));
          else res.end();
        })
        .then(() => surface.unsent.watch(res))
        .then(() => taken(res));
      surface.turns.set(req.socket, turn);
    },
  );
  server.on('connection', (socket: Socket) => surface.connections.admit(socket));
  // Long status waits hold a request open for up to 30 s; the default would cut idle keep-alives early.
  server.keepAliveTimeout = 65_000;
  return server;
}

async function handle(routes: HttpSurface, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  // No OAuth here: a client looking for its metadata learns so without the token (a 401 would send
  // it on to register a client), and sends the bearer token instead. Host and Origin still count.
  const wellKnown = path?.startsWith('/.well-known/') === true;
  const refusal = routes.guard.check(req);
  if (refusal && !(wellKnown && refusal.status === 401)) {
    const extra: Record<string, string> = refusal.status === 401 ? { 'www-authenticate': 'Bearer' } : {};
    return answerAndClose(routes, req, refusal.status, 'text/plain; charset=utf-8', `${refusal.message}\n`, extra);
  }
  const barred = routes.callers.refusal(req);
  if (barred !== null) return answerAndClose(routes, req, 403, 'text/plain; charset=utf-8', `${barred}\n`);
  const text = await readBody(req, res, req.method === 'POST' && path === '/mcp', routes.bodies);
  if (text === undefined) return; // the client went away mid-body: no one to answer
  if (text === BUSY)
    return answerAndClose(routes, req, 503, 'text/plain; charset=utf-8', `${BODIES_BUSY}\n`, { 'retry-after': '1' });
  if (text === null) {
    const error = new RpcError(INVALID_REQUEST, `Request body over ${MAX_BODY_BYTES} bytes`);
    return answerAndClose(routes, req, 413, 'application/json', JSON.stringify(responseOf(null, { error })));
  }
  routes.connections.requestReceived(req.socket);
  res.once('close', () => routes.connections.requestAnswered(req.socket));
  if (wellKnown) return sendText(res, 404, NO_OAUTH);
  if (req.method === 'GET' && (path === '/healthz' || path === '/todos')) {
    const answer =
      path === '/healthz'
        ? { ...routes.health(), connections: { ...routes.connections.counts(), ...routes.unsent.counts() } }
        : routes.todos();
    return sendJson(res, 200, answer);
  }
  if (req.method === 'GET' && path === '/metrics') {
    const text = await routes.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': routes.metrics.registry.contentType }).end(text);
    return;
  }
  if (path !== undefined && routes.operator.serves(path)) return routes.operator.handle(req, res, path);
  if (path !== '/mcp')
    return sendText(
      res,
      404,
      `Not found: ${path}; the MCP endpoint is /mcp; GET /healthz, /metrics, /todos, /policy and /approvals tell the operator about the daemon`,
    );
  // Every answer goes in its POST's response; a GET stream is a 2025 session's (its endpoint serves
  // it), for the channel events of the tasks it holds.
  if ((req.method === 'GET' || req.method === 'HEAD') && req.headers['mcp-session-id'] === undefined)
    return sendRpcError(res, transportRefusal(405, NO_STREAM), null, ['allow', 'POST']);
  const parsed = req.method === 'POST' ? parseBody(text) : { body: undefined };
  if (parsed instanceof RpcError) return sendRpcError(res, parsed);
  // A stream (a session's GET, a subscriptions/listen) lasts as long as its client holds it: not a request's time.
  if (req.method !== 'GET' && !isListen(parsed.body)) res.once('finish', routes.metrics.timeMcpRequest(parsed.body));
  const era = isStatelessRequest(req, parsed.body) ? routes.stateless : routes.sessions;
  await era.handle(req, res, parsed.body);
}

/**
 * Reads the request's body to its end, as text when `keep`, else dropped (''); null as soon as it
 * passes MAX_BODY_BYTES, BUSY as soon as the bodies being read or answered would pass
 * MAX_BODIES_BYTES (the rest is not read); undefined when the client went away mid-body. A body
 * kept counts until its answer `res` is over.
 */
function readBody(
  req: IncomingMessage,
  res: ServerResponse,
  keep: boolean,
  bodies: { held: number },
): Promise<string | null | undefined | typeof BUSY> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let finished = false;
    // Once only ('close' follows 'end'): what this body held of the bodies' budget is given back
    // now, or once its answer is over.
    const finish = (result: string | null | undefined | typeof BUSY) => {
      if (finished) return;
      finished = true;
      const giveBack = () => (bodies.held -= size);
      if (keep && typeof result === 'string') res.once('close', giveBack);
      else if (keep) giveBack();
      req.off('data', onData);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      const tooLarge = size + chunk.length > MAX_BODY_BYTES;
      if (tooLarge || (keep && bodies.held + chunk.length > MAX_BODIES_BYTES)) {
        req.pause();
        return finish(tooLarge ? null : BUSY);
      }
      size += chunk.length;
      if (keep) {
        bodies.held += chunk.length;
        chunks.push(chunk);
      }
    };
    req.on('data', onData);
    req.once('end', () => finish(keep ? Buffer.concat(chunks).toString('utf8') : ''));
    req.once('close', () => finish(undefined)); // after 'end', too late to matter
    req.once('error', () => finish(undefined));
  });
}

/**
 * Answers a request that is refused before its body was read, and closes the connection without
 * reading any more of it: reading stops at once, the answer goes out with a FIN after it, and the
 * socket is destroyed LINGER_MS later. A socket destroyed with unread data sends a reset, which can
 * destroy the answer before the client reads it, or fail a client still writing its body before it
 * reads the answer: the linger lets the answer arrive first (Go's net/http waits 500 ms so too).
 */
function answerAndClose(
  routes: HttpSurface,
  req: IncomingMessage,
  status: number,
  contentType: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  const { socket } = req;
  socket.pause();
  routes.connections.closingSoon(socket);
  const headers = {
    'content-type': contentType,
    ...extra,
    'content-length': Buffer.byteLength(body),
    connection: 'close',
  };
  const head = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${head}\r\n${body}`);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(linger));
}

/** Resolves once `res` was all handed to the kernel, or its connection closed. */
function taken(res: ServerResponse): Promise<void> {
  if (res.writableFinished || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
  });
}

function sendText(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
}

function isListen(body: unknown): boolean {
  return (body as { method?: unknown } | null)?.method === 'subscriptions/listen';
}
