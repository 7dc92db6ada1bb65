// Which MCP session mode and transport to serve: the SDK's streamable HTTP transport in stateful
// mode (a server and transport per session, reused for every call) against stateless mode (both
// made anew for every request), the daemon's own session endpoint (its protocol and transport,
// no SDK), and a bare node:http JSON-RPC reply as the floor. Same tool, same payload, the same loopback load from 16
// connections, all in this run: the modes take turns over rounds (the order rotated); rates are
// medians, ratios the median of each round's own.
// Usage: node dist/bench/mcp-modes.js [--calls N] [--rounds N] [--connections N]
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { pino } from 'pino';
import { Pool } from 'undici';
import { SessionEndpoint } from '../src/supervisor/mcp/session-endpoint.js';
import type { ToolRegistry } from '../src/supervisor/mcp/tool-registry.js';
import { alternateRounds, roundRatios, secondsSince, spreadOf } from './lib.js';
import { INITIALIZE, MCP_HEADERS } from '../test/helpers/raw-mcp.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
});
const CALLS = Number(values.calls);
const CONNECTIONS = Number(values.connections);
const RESULT = {
  content: [{ type: 'text' as const, text: 'task t-1 done: exit 0' }],
  structuredContent: { id: 't-1', state: 'done', exit_code: 0 },
};
const HEADERS = { ...MCP_HEADERS, 'mcp-protocol-version': '2025-06-18' };
const CALL_BODY = JSON.stringify({
  jsonrpc: '2.0',
  id: 2,
  method: 'tools/call',
  params: { name: 'status', arguments: { id: 't-1' } },
});

/** The same tool as the daemon's session endpoint serves it. */
const TOOLS: ToolRegistry = {
  listing: () => ({ tools: [] }),
  instructions: () => '',
  serverInfo: { name: 'bench', version: '1' },
  call: () => Promise.resolve(RESULT),
};
const SILENT = pino({ level: 'silent' });

function makeServer(): Server {
  const server = new Server({ name: 'bench', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [] }));
  server.setRequestHandler(CallToolRequestSchema, () => RESULT);
  return server;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

type Mode = 'bare' | 'stateless' | 'stateful' | 'daemon';

function serve(mode: Mode): HttpServer {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const ownSessions = new Map<string, SessionEndpoint>();
  return createServer((req, res) => void answer(req, res));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readJson(req);
    if (mode === 'bare') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id: (body as { id: number }).id, result: RESULT }));
      return;
    }
    if (mode === 'stateless') {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await makeServer().connect(transport);
      await transport.handleRequest(req, res, body);
      res.on('close', () => void transport.close());
      return;
    }
    const id = req.headers['mcp-session-id'];
    if (mode === 'daemon') {
      let own = typeof id === 'string' ? ownSessions.get(id) : undefined;
      if (!own) {
        own = new SessionEndpoint(randomUUID(), TOOLS, SILENT);
        ownSessions.set(own.sessionId, own);
      }
      await own.handleRequest(req, res, body);
      return;
    }
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (sid) => void sessions.set(sid, transport!),
      });
      await makeServer().connect(transport);
    }
    await transport.handleRequest(req, res, body);
  }
}

async function measure(mode: Mode): Promise<number> {
  const server = serve(mode);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const pool = new Pool(origin, { connections: CONNECTIONS });
  let headers: Record<string, string> = HEADERS;
  if (mode !== 'bare') {
    const init = await pool.request({
      path: '/mcp',
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify(INITIALIZE),
    });
    await init.body.text();
    const session = init.headers['mcp-session-id'];
    if (typeof session === 'string') headers = { ...HEADERS, 'mcp-session-id': session };
  }
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next++ < CALLS) {
        const res = await pool.request({ path: '/mcp', method: 'POST', headers, body: CALL_BODY });
        const text = await res.body.text();
        if (res.statusCode !== 200 || !text.includes('t-1'))
          throw new Error(`${mode}: ${res.statusCode} ${text.slice(0, 200)}`);
      }
    }),
  );
  const rate = CALLS / secondsSince(start);
  await pool.close();
  server.closeAllConnections();
  server.close();
  return rate;
}

// A first pass warms the load generator's own code (undici, the pool), which would otherwise be
// charged to whichever mode runs first.
await measure('bare');
const rates = await alternateRounds(Number(values.rounds), {
  bare: () => measure('bare'),
  stateless: () => measure('stateless'),
  stateful: () => measure('stateful'),
  daemon: () => measure('daemon'),
});
const row = (mode: string, of: Mode) => {
  const { median, min, max } = spreadOf(rates[of]!);
  const ratio = roundRatios(rates[of]!, rates.bare!);
  return {
    mode,
    calls_per_s: median,
    min,
    max,
    ratio: ratio.median,
    round_ratio_min: ratio.min,
    round_ratio_max: ratio.max,
  };
};
const rows = [
  row('bare node:http JSON-RPC', 'bare'),
  row('SDK stateless', 'stateless'),
  row('SDK stateful', 'stateful'),
  row("the daemon's session endpoint", 'daemon'),
];
console.table(rows);
console.log(
  JSON.stringify({
    benchmark: 'mcp-modes',
    calls: CALLS,
    rounds: Number(values.rounds),
    connections: CONNECTIONS,
    rows,
  }),
);
