// The server side of MCP's streamable HTTP transport in its JSON-response mode, written directly on
// node:http: one per session, under the SDK's protocol Server (which it feeds through the SDK's
// Transport interface).
//
// Why not the SDK's StreamableHTTPServerTransport: on Node it converts every request into a web
// Request and every answer back (through @hono/node-server), validates each message with zod, and
// scans all requests in flight on every answer. A profile of 8,000 status calls put that at about
// a third of the daemon's time per call (bench/README.md). This daemon answers every POST with JSON
// and sends nothing outside a response, so what it needs of the transport is small: the checks the
// specification asks of a server (Accept, Content-Type, session, protocol version), requests
// answered as one JSON body, notifications with 202, DELETE to end the session, and 405 for the
// optional GET stream. The refusals use the SDK transport's own status codes and messages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { checkKnownParams, checkMessage, usableId } from './message-check.js';
import { sendJsonText } from './rpc-error.js';
import type { DirectAnswerer } from './direct-calls.js';
import type { CallRequestInfo } from './server.js';

/** Messages of one POST at most (a batch, from protocol versions before 2025-06-18). */
const MAX_BATCH = 100;

/** The requests of one POST, answered together once every one has its response or was cancelled. */
interface PendingPost {
  res: ServerResponse;
  ids: RequestId[];
  responses: Map<RequestId, JSONRPCMessage>;
  /** Cancelled by the client (notifications/cancelled): answered by nothing, as the spec says. */
  cancelled: Set<RequestId>;
  /** Errors for the batch's messages that were refused before the protocol saw them. */
  refused: JSONRPCMessage[];
  batch: boolean;
  done: () => void;
}

export class JsonHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  private readonly posts = new Map<RequestId, PendingPost>();
  private isInitialized = false;
  private closed = false;

  /**
   * `versions`: the protocol versions the SDK knows (its SUPPORTED_PROTOCOL_VERSIONS); `direct`
   * answers the plain calls without the protocol layer (direct-calls.ts).
   */
  constructor(
    readonly sessionId: string,
    private readonly versions: readonly string[],
    private readonly direct: DirectAnswerer = () => null,
  ) {}

  /** True once an initialize request was taken: the session exists for the client. */
  get initialized(): boolean {
    return this.isInitialized;
  }

  async start(): Promise<void> {}

  /** Serves one request of this session; resolves once it is answered. `body` is a POST's parsed JSON. */
  handleRequest(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.closed) return Promise.resolve(sendJsonRpcError(res, 404, -32001, 'Session not found'));
    if (req.method === 'POST') return this.post(req, res, body);
    if (req.method === 'DELETE') {
      const refusal = protocolVersionRefusal(req, this.versions);
      if (refusal) return Promise.resolve(sendJsonRpcError(res, 400, -32000, refusal));
      res.writeHead(200).end();
      return this.close();
    }
    // No server-initiated stream: every message this server sends answers a POST.
    const refusal =
      'Method not allowed: this server answers every request in its POST response and offers no GET stream';
    return Promise.resolve(sendJsonRpcError(res, 405, -32000, refusal, { allow: 'POST, DELETE' }));
  }

  private post(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const media = mediaTypeRefusal(req);
    if (media !== null) return Promise.resolve(sendJsonRpcError(res, media.status, -32000, media.message));
    const batch = Array.isArray(body);
    const all = (batch ? body : [body]) as unknown[];
    if (all.length > MAX_BATCH)
      return Promise.resolve(
        sendJsonRpcError(res, 400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`),
      );
    if (all.length === 0) return Promise.resolve(sendJsonRpcError(res, 400, -32600, 'Invalid Request: an empty batch'));
    // What the protocol layer would drop unanswered, or answer as an internal error, is answered
    // here, each with its id where it has one. Responses are dropped: this server sends no
    // requests, so none is awaited (and the protocol layer need not walk what a client put in one).
    const refused: JSONRPCMessage[] = [];
    let status = 200;
    const messages = all.filter((message): message is LooseMessage => {
      const problem = checkMessage(message);
      const paramsProblem = problem === null ? checkKnownParams(message as LooseMessage) : null;
      if (problem !== null) status = 400;
      if (problem !== null || paramsProblem !== null) {
        const error =
          problem !== null
            ? { code: -32600, message: `Invalid Request: ${problem}` }
            : { code: -32602, message: `Invalid params: ${paramsProblem}` };
        refused.push({ jsonrpc: '2.0', id: usableId(message), error } as unknown as JSONRPCMessage);
        return false;
      }
      return (message as LooseMessage).method !== undefined;
    });
    if (!batch && refused.length > 0) return Promise.resolve(sendJson(res, status, refused[0]!));
    // A session's first request, and only it, is an initialize alone (SessionManager sees to it).
    const initializing = messages.some((message) => message.method === 'initialize');
    if (initializing) {
      if (this.isInitialized)
        return Promise.resolve(sendJsonRpcError(res, 400, -32600, 'Invalid Request: Server already initialized'));
      this.isInitialized = true;
    } else {
      const refusal = protocolVersionRefusal(req, this.versions);
      if (refusal) return Promise.resolve(sendJsonRpcError(res, 400, -32000, refusal));
    }
    const ids = messages
      .filter((message) => message.method !== undefined && message.id !== undefined)
      .map((message) => message.id as RequestId);
    if (ids.some((id) => this.posts.has(id)) || new Set(ids).size !== ids.length) {
      return Promise.resolve(
        sendJsonRpcError(res, 400, -32600, 'Invalid Request: a request id is already in flight in this session'),
      );
    }
    if (ids.length === 0) {
      this.deliver(messages, req);
      if (refused.length > 0) sendJson(res, 200, refused);
      else res.writeHead(202).end();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const post: PendingPost = { res, ids, responses: new Map(), cancelled: new Set(), refused, batch, done: resolve };
      for (const id of ids) this.posts.set(id, post);
      // A client that goes away is answered by nothing: its requests are forgotten here (their
      // handlers finish, and their responses find no POST).
      res.once('close', () => {
        if (res.writableEnded) return;
        for (const id of post.ids) if (this.posts.get(id) === post) this.posts.delete(id);
        post.done();
      });
      this.deliver(messages, req);
    });
  }

  /** Hands each message of `req` to the protocol, `req` with it for the tools; a cancellation also lets its request's POST end without it. */
  private deliver(messages: LooseMessage[], req: IncomingMessage): void {
    for (const message of messages) {
      const answer = this.direct(message, req);
      if (answer !== null) {
        void answer.then((response) => this.send(response));
        continue;
      }
      const requestInfo: CallRequestInfo = { headers: req.headers, from: req };
      this.onmessage?.(message as JSONRPCMessage, { requestInfo });
      if (message.method !== 'notifications/cancelled') continue;
      const id = (message as { params?: { requestId?: RequestId } }).params?.requestId;
      const post = id === undefined ? undefined : this.posts.get(id);
      if (post === undefined) continue;
      post.cancelled.add(id!);
      this.answerWhenComplete(post);
    }
  }

  /** Answers a POST once each of its requests has a response or was cancelled (202 if none has one). */
  private answerWhenComplete(post: PendingPost): void {
    if (post.ids.some((id) => !post.responses.has(id) && !post.cancelled.has(id))) return;
    for (const id of post.ids) this.posts.delete(id);
    const answers = [
      ...post.ids.filter((id) => post.responses.has(id)).map((id) => post.responses.get(id)),
      ...post.refused,
    ];
    if (answers.length === 0) post.res.writeHead(202).end();
    else
      sendJsonText(post.res, 200, JSON.stringify(post.batch ? answers : answers[0]), [
        'mcp-session-id',
        this.sessionId,
      ]);
    post.done();
  }

  send(message: JSONRPCMessage): Promise<void> {
    // Only responses have a place to go; a notification outside a stream is dropped, as the
    // SDK's transport does in JSON mode.
    if (!('result' in message || 'error' in message) || message.id === undefined) return Promise.resolve();
    const post = this.posts.get(message.id);
    if (!post) return Promise.resolve(); // cancelled, its client gone, or the session closed meanwhile
    post.responses.set(message.id, message);
    this.answerWhenComplete(post);
    return Promise.resolve();
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    for (const post of new Set(this.posts.values())) {
      if (!post.res.headersSent)
        sendJsonRpcError(post.res, 404, -32001, 'Session not found: it was closed while this request ran');
      post.done();
    }
    this.posts.clear();
    this.onclose?.();
    return Promise.resolve();
  }
}

type LooseMessage = { jsonrpc?: unknown; method?: unknown; id?: unknown; result?: unknown; error?: unknown };

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** Why a POST's Accept or Content-Type is refused (406, 415), or null; the same in both eras. */
export function mediaTypeRefusal(req: IncomingMessage): { status: number; message: string } | null {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
    return { status: 406, message: 'Not Acceptable: Client must accept both application/json and text/event-stream' };
  }
  // application/json by its parsed media type (parameters such as charset allowed), never a substring.
  const type = req.headers['content-type'];
  if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== 'application/json') {
    return { status: 415, message: 'Unsupported Media Type: Content-Type must be application/json' };
  }
  return null;
}

/** After initialization a client may name its protocol version; one this SDK does not know is refused. */
function protocolVersionRefusal(req: IncomingMessage, versions: readonly string[]): string | null {
  const version = req.headers['mcp-protocol-version'];
  if (version === undefined || (typeof version === 'string' && versions.includes(version))) return null;
  return `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${versions.join(', ')})`;
}

/** Answers with a JSON-RPC error object, as the SDK's transport does for its refusals. */
export function sendJsonRpcError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJsonText(
    res,
    status,
    JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }),
    Object.entries(headers).flat(),
  );
}
