// The HTTP surface: /mcp (MCP streamable HTTP, each POST to the era it is of), /healthz, /metrics and /todos, behind the request guard.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Logger } from 'pino';
import type { SessionManager } from '../mcp/sessions.js';
import { isModernRequest } from '../mcp/eras.js';
import type { ModernEndpoint } from '../mcp/modern-endpoint.js';
import { sendJsonRpcError } from '../mcp/json-transport.js';
import { sendJsonText } from '../mcp/rpc-error.js';
import type { DaemonMetrics } from '../metrics.js';
import type { RequestGuard } from './guard.js';

// Required, not imported: an import of node:http reads every export of the module, and on Node 22
// and later three of them (WebSocket, CloseEvent, MessageEvent) are getters that load Node's own
// undici, with web streams, HTTP/2 and TLS (76 more of Node's modules on Node 24).
const { createServer } = createRequire(import.meta.url)('node:http') as typeof import('node:http');

/** A run's command is at most 256 KiB; JSON escaping can grow it sixfold. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpRoutes {
  guard: RequestGuard;
  /** Why a request from one of the daemon's own tasks is refused (--tasks-may-call off), or null; null: none is. */
  callerGate: ((req: IncomingMessage) => string | null) | null;
  /** The 2025-11-25 era and before: initialize, then a session. */
  sessions: SessionManager;
  /** The 2026-07-28 era: every request on its own. */
  modern: ModernEndpoint;
  health(): object;
  /** The outbox and the harness connection, for the operator. */
  todos(): object;
  metrics: DaemonMetrics;
  log: Logger;
}

export function createHttpServer(routes: HttpRoutes): Server {
  const server = createServer((req, res) => {
    handle(routes, req, res).catch((error: Error) => {
      routes.log.error({ err: error, url: req.url }, 'request failed');
      if (!res.headersSent) sendJsonRpcError(res, 500, -32603, `internal error: ${error.message}`);
      else res.end();
    });
  });
  // Long status waits hold a request open for up to 30 s; the defaults would cut idle keep-alives early.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  return server;
}

async function handle(routes: HttpRoutes, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const refusal = routes.guard.check(req);
  const path = (req.url ?? '/').split('?')[0];
  // Every answer goes out once the request's body has been read (kept only for /mcp, up to the
  // limit; else dropped): a socket closed with unread data is reset, and the reset can destroy
  // the answer before the client reads it. node:http's request timeout bounds a body that never ends.
  const text = await readBody(req, refusal === null && req.method === 'POST' && path === '/mcp');
  if (text === undefined) return; // the client went away mid-body: no one to answer
  if (refusal) return sendText(res, refusal.status, refusal.message);
  const barred = routes.callerGate?.(req) ?? null;
  if (barred !== null) return sendText(res, 403, barred);
  if (req.method === 'GET' && (path === '/healthz' || path === '/todos')) {
    return sendJsonText(res, 200, JSON.stringify(path === '/healthz' ? routes.health() : routes.todos()));
  }
  if (req.method === 'GET' && path === '/metrics') {
    const text = routes.metrics.registry.metrics();
    res.writeHead(200, { 'content-type': routes.metrics.registry.contentType }).end(text);
    return;
  }
  if (path !== '/mcp')
    return sendText(
      res,
      404,
      `Not found: ${path}; the MCP endpoint is /mcp; GET /healthz, /metrics and /todos tell the operator about the daemon`,
    );
  let body: unknown;
  if (req.method === 'POST') {
    if (text === null) return sendJsonRpcError(res, 413, -32600, `Request body over ${MAX_BODY_BYTES} bytes`);
    try {
      body = JSON.parse(text);
    } catch (error) {
      return sendJsonRpcError(res, 400, -32700, `Parse error: the body is not JSON (${(error as Error).message})`);
    }
  }
  const done = routes.metrics.timeMcpRequest(body);
  res.once('finish', done);
  await (isModernRequest(req, body) ? routes.modern : routes.sessions).handle(req, res, body);
}

/**
 * Reads the request's body to its end: as text when `keep` (null when it is over MAX_BODY_BYTES,
 * whose rest is dropped), else dropped ('' then); undefined when the client closed mid-body.
 */
function readBody(req: IncomingMessage, keep: boolean): Promise<string | null | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (keep && size <= MAX_BODY_BYTES) chunks.push(chunk);
      else chunks.length = 0;
    });
    req.once('end', () => resolve(!keep ? '' : size > MAX_BODY_BYTES ? null : Buffer.concat(chunks).toString('utf8')));
    req.once('close', () => resolve(undefined)); // after 'end', too late to matter
    req.once('error', () => resolve(undefined));
  });
}

function sendText(res: ServerResponse, status: number, message: string): void {
  const headers: Record<string, string> = { 'content-type': 'text/plain; charset=utf-8' };
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  res.writeHead(status, headers).end(`${message}\n`);
}
