// One session of the 2025 era (2025-11-25 and before) over streamable HTTP in its JSON-response
// mode, written directly on node:http: the checks the specification asks of a server (Accept,
// Content-Type, session, protocol version), each request answered in its POST's response (a batch's
// together, as one JSON array), notifications with 202, a cancelled request with nothing, DELETE to
// end the session, and GET for its stream, which carries a channel event (Claude Code's
// notifications/claude/channel) when a task the session's run left running waits for a person or
// ends, and notifications/tasks/status as a task its run made an MCP task changes (session-tasks.ts). The refusals keep the status codes and messages of the SDK's transport, which clients know.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { mediaTypeRefusal, SESSION_PROTOCOL_VERSIONS } from './protocol-versions.js';
import {
  ANSWER_TOO_LARGE,
  checkMessage,
  INVALID_PARAMS,
  INVALID_REQUEST,
  isCall,
  refusal,
  responseOf,
  RpcError,
  sendJson,
  sendJsonText,
  sendRpcError,
  settle,
  SESSION_NOT_FOUND,
  transportRefusal,
  usableId,
  type RequestId,
  type RpcAnswer,
  type RpcMessage,
} from './json-rpc.js';
import { isObject, type Loose } from './json-object.js';
import { answerSessionRequest, checkInitializeParams, reachOfSession, speaksTasks } from './session-methods.js';
import { checkToolParams, type CallToolResult, type ToolRegistry } from './tool-registry.js';
import type { EndReach } from './end-notice.js';
import { outlivedWait } from './mcp-tasks.js';
import { CHANNEL_METHOD } from './channel-message.js';
import { SessionStream } from './session-stream.js';
import type { PushEvent, TaskPush } from './task-push.js';
import { SessionTasks } from './session-tasks.js';
import type { McpTasks } from './mcp-tasks.js';

/** Messages of one POST at most (a batch, from protocol versions before 2025-06-18). */
const MAX_BATCH = 100;
/**
 * The bytes of a batch's answer at most: a response that would take it past is an error instead.
 * Each call bounds its own answer; a hundred of them in one POST could be a hundred times that.
 */
export const MAX_BATCH_ANSWER_BYTES = 16 * 1024 * 1024;
const NO_METHOD = 'Method not allowed: a session takes POST (requests), GET (its stream) and DELETE (its end)';

/** The requests of one POST, answered together once every one has its response or was cancelled. */
interface PendingPost {
  res: ServerResponse;
  ids: RequestId[];
  /** Each response as the JSON text it is sent as. */
  responses: Map<RequestId, string>;
  /** The bytes of those texts, in all. */
  bytes: number;
  /** Cancelled by the client (notifications/cancelled): answered by nothing, as the spec says. */
  cancelled: Set<RequestId>;
  /** Errors for the batch's messages that were refused before dispatch. */
  refused: Loose[];
  batch: boolean;
  done: () => void;
}

/** A POST's messages sorted: the requests and notifications to serve, and the answers to those refused. */
interface SortedPost {
  calls: RpcMessage[];
  refused: Loose[];
  /** 400 when a message is not JSON-RPC at all, else 200. */
  status: number;
}

export class SessionEndpoint {
  onclose?: () => void;
  private readonly posts = new Map<RequestId, PendingPost>();
  private isInitialized = false;
  private closed = false;
  /** How a task's end reaches the client's agent: from its initialize. */
  private reach: EndReach = 'wait';
  private readonly stream = new SessionStream();
  /** The tasks whose events go to the stream: each a run of this session left running, with its unwatch. */
  private readonly held = new Map<string, () => void>();
  /** The MCP tasks of this session (2025-11-25's Tasks utility); null where none are offered. */
  private tasks: SessionTasks | null;

  constructor(
    readonly sessionId: string,
    private readonly tools: ToolRegistry,
    private readonly log: Logger,
    private readonly push: TaskPush | null = null,
    mcpTasks: McpTasks | null = null,
  ) {
    this.tasks =
      push && mcpTasks
        ? new SessionTasks(mcpTasks, push, (method, params) => {
            if (!this.closed) this.stream.notify(method, params);
          })
        : null;
  }

  /** Whether the client holds the session's GET stream open. */
  get streaming(): boolean {
    return this.stream.open;
  }

  /** True once an initialize request was taken: the session exists for the client. */
  get initialized(): boolean {
    return this.isInitialized;
  }

  /** Serves one request of this session; resolves once it is answered. `body` is a POST's parsed JSON. */
  handleRequest(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    if (this.closed)
      return Promise.resolve(sendRpcError(res, transportRefusal(404, 'Session not found', SESSION_NOT_FOUND)));
    if (req.method === 'POST') return this.post(req, res, body);
    if (req.method === 'DELETE') {
      const refused = versionRefusal(req);
      if (refused) return Promise.resolve(sendRpcError(res, refused));
      res.writeHead(200).end();
      return this.close();
    }
    if (req.method === 'GET') {
      const refused = versionRefusal(req);
      if (refused) return Promise.resolve(sendRpcError(res, refused));
      return this.stream.serve(req, res, this.sessionId);
    }
    return Promise.resolve(sendRpcError(res, transportRefusal(405, NO_METHOD), null, ['allow', 'GET, POST, DELETE']));
  }

  private post(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const batch = Array.isArray(body);
    const all = (batch ? body : [body]) as unknown[];
    const refused = mediaTypeRefusal(req) ?? batchRefusal(all);
    if (refused) return Promise.resolve(sendRpcError(res, refused));
    const sorted = sortMessages(all);
    if (!batch && sorted.refused.length > 0) return Promise.resolve(sendJson(res, sorted.status, sorted.refused[0]));
    const ids = sorted.calls.filter((call) => call.id !== undefined).map((call) => call.id!);
    const unfit = this.admit(req, sorted.calls, ids);
    if (unfit) return Promise.resolve(sendRpcError(res, unfit));
    if (ids.length === 0) {
      this.deliver(sorted.calls, req, null);
      if (sorted.refused.length > 0) sendJson(res, 200, sorted.refused);
      else res.writeHead(202).end();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const post: PendingPost = {
        res,
        ids,
        responses: new Map(),
        bytes: 0,
        cancelled: new Set(),
        refused: sorted.refused,
        batch,
        done: resolve,
      };
      for (const id of ids) this.posts.set(id, post);
      // A client that goes away is answered by nothing: its requests are forgotten here (their
      // handlers finish, and their responses find no POST).
      res.once('close', () => {
        if (res.writableEnded) return;
        for (const id of post.ids) if (this.posts.get(id) === post) this.posts.delete(id);
        post.done();
      });
      this.deliver(sorted.calls, req, post);
    });
  }

  /**
   * Why this session refuses a POST of `calls` as a whole, or null: a session's first request, and
   * only it, is an initialize (SessionManager sees to the first); every later one names a version
   * served here, if any, and reuses no id still in flight.
   */
  private admit(req: IncomingMessage, calls: RpcMessage[], ids: RequestId[]): RpcError | null {
    const initialize = calls.find((call) => call.method === 'initialize');
    if (initialize) {
      if (this.isInitialized) return refusal(INVALID_REQUEST, 'Invalid Request: Server already initialized');
      this.isInitialized = true;
      this.reach = reachOfSession(initialize.params);
      // Older versions have no MCP tasks: their sessions answer a call with a task member as a plain one.
      if (!speaksTasks(initialize.params)) this.tasks = null;
    } else {
      const refused = versionRefusal(req);
      if (refused) return refused;
    }
    if (ids.some((id) => this.posts.has(id)) || new Set(ids).size !== ids.length)
      return refusal(INVALID_REQUEST, 'Invalid Request: a request id is already in flight in this session');
    return null;
  }

  /** Serves each message of `req`: a request's answer goes to its POST; a cancellation lets its request's POST end without it. */
  private deliver(calls: RpcMessage[], req: IncomingMessage, own: PendingPost | null): void {
    for (const call of calls) {
      if (call.id !== undefined) {
        const id = call.id;
        void settle(
          call.method,
          () => answerSessionRequest(call, this.tools, req, this.reach, this.tasks),
          this.log,
        ).then((answer) => {
          if (call.method === 'tools/call' && 'result' in answer) this.hold(call, answer.result as CallToolResult);
          this.send(own, id, answer);
        });
      } else if (call.method === 'notifications/cancelled') {
        const id = call.params?.requestId as RequestId | undefined;
        const post = id === undefined ? undefined : this.posts.get(id);
        if (post === undefined) continue;
        post.cancelled.add(id!);
        this.answerWhenComplete(post);
      }
    }
  }

  /** Watches the task a run left running, once, so that its events reach the stream. */
  private hold(call: RpcMessage, result: CallToolResult): void {
    const name = isObject(call.params) ? call.params.name : undefined;
    const id = this.push !== null && typeof name === 'string' ? outlivedWait(name, result) : null;
    if (id === null || this.held.has(id) || this.closed) return;
    this.held.set(
      id,
      this.push!.watch(id, (event) => this.pushed(event)),
    );
  }

  /** A held task's event, as a channel event on the stream (an exec that no longer waits is not one). */
  private pushed(event: PushEvent): void {
    if (this.closed || event.kind === 'answered') return;
    if (event.kind === 'ended') this.held.delete(event.record.id);
    this.stream.notify(CHANNEL_METHOD, { ...this.push!.channelOf(event) });
  }

  /** Gives request `id` its answer; dropped when it was cancelled, its client went away, or the session closed meanwhile. */
  private send(post: PendingPost | null, id: RequestId, answer: RpcAnswer): void {
    if (post === null || this.posts.get(id) !== post || post.cancelled.has(id)) return;
    // Counted in characters: JSON.stringify escapes nothing above ASCII, so a few bytes are more.
    let text = JSON.stringify(responseOf(id, answer));
    if (post.batch && post.bytes + text.length > MAX_BATCH_ANSWER_BYTES)
      text = JSON.stringify(tooLarge(id, post.bytes));
    post.bytes += text.length;
    post.responses.set(id, text);
    this.answerWhenComplete(post);
  }

  /** Answers a POST once each of its requests has a response or was cancelled (202 if none has one). */
  private answerWhenComplete(post: PendingPost): void {
    if (post.ids.some((id) => !post.responses.has(id) && !post.cancelled.has(id))) return;
    for (const id of post.ids) this.posts.delete(id);
    const answers = [
      ...post.ids.flatMap((id) => post.responses.get(id) ?? []),
      ...post.refused.map((answer) => JSON.stringify(answer)),
    ];
    if (answers.length === 0) post.res.writeHead(202).end();
    else
      sendJsonText(post.res, 200, post.batch ? `[${answers.join(',')}]` : answers[0]!, [
        'mcp-session-id',
        this.sessionId,
      ]);
    post.done();
  }

  /** Ends the session: requests in flight are answered 404, and later ones too. */
  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    const gone = transportRefusal(404, 'Session not found: it was closed while this request ran', SESSION_NOT_FOUND);
    for (const post of new Set(this.posts.values())) {
      if (!post.res.headersSent) sendRpcError(post.res, gone);
      post.done();
    }
    this.posts.clear();
    for (const unwatch of this.held.values()) unwatch();
    this.held.clear();
    this.tasks?.close();
    this.stream.close();
    this.onclose?.();
    return Promise.resolve();
  }
}

function batchRefusal(all: unknown[]): RpcError | null {
  if (all.length > MAX_BATCH)
    return refusal(INVALID_REQUEST, `Invalid Request: Batch must not exceed ${MAX_BATCH} messages`);
  if (all.length === 0) return refusal(INVALID_REQUEST, 'Invalid Request: an empty batch');
  return null;
}

/**
 * Sorts a POST's messages: what is not JSON-RPC is refused INVALID_REQUEST, a known method's unfit
 * params INVALID_PARAMS, each with its id where it has one. Responses are dropped: this server
 * sends no requests, so it awaits none.
 */
function sortMessages(all: unknown[]): SortedPost {
  const sorted: SortedPost = { calls: [], refused: [], status: 200 };
  for (const message of all) {
    const problem = checkMessage(message);
    if (problem !== null) sorted.status = 400;
    const unfit = problem === null && isCall(message) ? checkParams(message) : null;
    const error =
      problem !== null
        ? refusal(INVALID_REQUEST, `Invalid Request: ${problem}`)
        : unfit !== null
          ? new RpcError(INVALID_PARAMS, `Invalid params: ${unfit}`)
          : null;
    if (error !== null) sorted.refused.push(responseOf(usableId(message), { error }));
    else if (isCall(message)) sorted.calls.push(message);
  }
  return sorted;
}

function checkParams(call: RpcMessage): string | null {
  return call.method === 'initialize' ? checkInitializeParams(call.params) : checkToolParams(call);
}

/** After initialization a client may name its protocol version; one not served here is refused. */
function versionRefusal(req: IncomingMessage): RpcError | null {
  const version = req.headers['mcp-protocol-version'];
  if (version === undefined || (typeof version === 'string' && SESSION_PROTOCOL_VERSIONS.includes(version)))
    return null;
  return transportRefusal(
    400,
    `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SESSION_PROTOCOL_VERSIONS.join(', ')})`,
  );
}

/** The response to request `id` of a batch whose answers already hold `bytes`, too many for this one's as well. */
function tooLarge(id: RequestId, bytes: number): Loose {
  const message = `Request answered with nothing: the answers of this batch before it hold ${bytes} bytes, and with this one's they would pass the ${MAX_BATCH_ANSWER_BYTES} bytes a batch's answer may have; send it in a POST of its own, or ask for less (tail_bytes, max_bytes)`;
  return responseOf(id, { error: new RpcError(ANSWER_TOO_LARGE, message) });
}
