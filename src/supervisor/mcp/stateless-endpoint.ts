// MCP 2026-07-28 on /mcp: every request stands alone (no initialize, no session), carries its
// version and the client's capabilities in params._meta, and is answered in its POST's response as
// JSON with a resultType. The methods: server/discover, tools/list (with cache hints), tools/call
// (a run may answer input_required, when an exec of its task waits for a person: approval-inputs.ts),
// the Tasks extension's tasks/get, tasks/cancel, tasks/update, and subscriptions/listen for its
// notifications/tasks (task-subscriptions.ts). What the tools and instructions say of a task's end
// follows the request's capabilities: a client that declares the extension holds run as a task.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import {
  CLIENT_INFO_META,
  mediaTypeRefusal,
  requestMeta,
  SERVER_INFO_META,
  STATELESS_PROTOCOL_VERSIONS,
} from './protocol-versions.js';
import {
  checkMessage,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  MISSING_CLIENT_CAPABILITY,
  refusal,
  RpcError,
  sendRpcAnswer,
  sendRpcError,
  settle,
  usableId,
  type RpcMessage,
} from './json-rpc.js';
import { isObject, type Loose } from './json-object.js';
import { checkStatelessRequest, type Envelope } from './stateless-checks.js';
import { checkToolParams, errorResult, type CallToolResult, type ToolRegistry } from './tool-registry.js';
import { declaresTasks, outlivedWait, TASKS_EXTENSION, type McpTasks } from './mcp-tasks.js';
import { declaresElicitation, type ApprovalInputs } from './approval-inputs.js';
import { DEFAULT_WAIT_SECONDS } from './tools/run.js';
import type { EndReach } from './end-notice.js';
import { declinesDiscover, type DeclineDiscover } from './channel-clients.js';
import type { TaskPush } from './task-push.js';
import { listenedTasks, serveListen } from './task-subscriptions.js';

/** How long a client may keep tools/list and server/discover: the tools change only with the daemon's version. */
export const LIST_TTL_MS = 3_600_000;
const TASK_METHODS = new Set(['tasks/get', 'tasks/cancel', 'tasks/update']);
const SERVED = [
  'server/discover',
  'tools/list',
  'tools/call',
  'tasks/get',
  'tasks/cancel',
  'tasks/update',
  'subscriptions/listen',
];

/** A request of this era: a message with an id (the era defines no client notifications). */
type Request = RpcMessage & { id: string | number };

export class StatelessEndpoint {
  constructor(
    private readonly tools: ToolRegistry,
    private readonly mcpTasks: McpTasks,
    private readonly inputs: ApprovalInputs,
    private readonly log: Logger,
    private readonly push: TaskPush,
    /** --decline-discover: to whom server/discover answers "method not found". */
    private readonly declineDiscover: DeclineDiscover = 'never',
  ) {}

  /** Serves one POST the era classifier gave to 2026-07-28; resolves once it is answered. */
  async handle(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const id = usableId(body);
    const refused = checkTransport(req, body);
    if (refused !== null) return sendRpcError(res, refused, id);
    const message = body as RpcMessage;
    if (message.id === undefined) return void res.writeHead(202).end(); // this era defines no client notifications: taken, and dropped
    const envelope = checkStatelessRequest(req, message);
    if (envelope instanceof RpcError) return sendRpcError(res, envelope, id);
    const unfit = checkToolParams(message);
    if (unfit !== null) return sendRpcError(res, new RpcError(INVALID_PARAMS, `Invalid params: ${unfit}`), id);
    if (message.method === 'subscriptions/listen') {
      const taskIds = listenedTasks(message.params ?? {}, envelope.capabilities);
      if (taskIds instanceof RpcError) return sendRpcError(res, taskIds, id);
      const tasks = { mcpTasks: this.mcpTasks, push: this.push };
      return serveListen(res, message.id, taskIds, envelope.capabilities, tasks);
    }
    const answer = await settle(message.method, () => this.dispatch(message as Request, envelope, req), this.log);
    sendRpcAnswer(res, 'error' in answer ? answer.error.status : 200, id, answer);
  }

  /** Answers `request`, which the HTTP request `from` carried. */
  private async dispatch(request: Request, envelope: Envelope, from: IncomingMessage): Promise<Loose> {
    const params = request.params ?? {};
    if (TASK_METHODS.has(request.method)) return this.taskMethod(request.method, params, envelope, from);
    const reach: EndReach = declaresTasks(envelope.capabilities) ? 'task' : 'wait';
    switch (request.method) {
      case 'server/discover':
        if (declinesDiscover(this.declineDiscover, requestMeta(request)?.[CLIENT_INFO_META], envelope.capabilities))
          throw refusal(
            METHOD_NOT_FOUND,
            'Method not found: server/discover is declined to this client (--decline-discover): open a 2025-11-25 session with initialize, whose GET stream carries the channel events of the tasks it runs',
          );
        return {
          resultType: 'complete',
          supportedVersions: [...STATELESS_PROTOCOL_VERSIONS],
          capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
          instructions: this.tools.instructions(reach),
          ttlMs: LIST_TTL_MS,
          // Private: the instructions and tool texts follow the capabilities this client declared.
          cacheScope: 'private',
          _meta: { [SERVER_INFO_META]: this.tools.serverInfo },
        };
      case 'tools/list':
        return { resultType: 'complete', ...this.tools.listing(reach), ttlMs: LIST_TTL_MS, cacheScope: 'private' };
      case 'tools/call':
        return this.callTool(params, envelope, from);
    }
    throw refusal(
      METHOD_NOT_FOUND,
      `Method not found: ${JSON.stringify(request.method.slice(0, 80))} is not a method of MCP 2026-07-28 here; this server serves ${SERVED.join(', ')} (initialize and sessions are the 2025-11-25 era's: send initialize without a 2026-07-28 _meta or header)`,
    );
  }

  /**
   * tools/call. A run's retry (MRTR) answers the approvals it carries and resumes its task's wait
   * (as status waits), at once when the client cancelled a form (the exec waits on for the
   * operator, and the caller is told so); a run whose wait ended with an exec of its task waiting
   * for a person asks a client that declared elicitation; one that outlived its wait is answered as
   * an MCP task. A run that did not wait (wait_seconds 0) asks no one: it answers at once.
   */
  private async callTool(params: Loose, envelope: Envelope, from: IncomingMessage): Promise<Loose> {
    const name = params.name as string;
    const retry = this.inputs.retry(name, params, from);
    if (retry !== null && 'refused' in retry)
      return { resultType: 'complete', ...errorResult({ code: retry.refused.code, message: retry.refused.message }) };
    const canAsk =
      name === 'run' && waitSecondsOf(params.arguments) !== 0 && declaresElicitation(envelope.capabilities);
    const result =
      retry === null
        ? await this.tools.call(name, params.arguments, from, { askable: canAsk })
        : withNotes(
            await this.tools.call('status', resumedWait(params.arguments, retry.taskId, retry.cancelled), from, {
              askable: canAsk && !retry.cancelled,
            }),
            retry.notes,
          );
    const snapshot = result.isError === true ? undefined : result.structuredContent;
    if (canAsk && snapshot?.state === 'running') {
      const asked = this.inputs.inputRequired(name, params.arguments, snapshot.id as string);
      if (asked !== null) return asked;
    }
    const taskId = declaresTasks(envelope.capabilities) ? outlivedWait(name, result) : null;
    return taskId === null ? { resultType: 'complete', ...result } : this.mcpTasks.created(taskId);
  }

  private taskMethod(method: string, params: Loose, envelope: Envelope, from: IncomingMessage): Loose {
    if (!declaresTasks(envelope.capabilities)) {
      throw refusal(
        MISSING_CLIENT_CAPABILITY,
        `Missing required client capability: ${method} is part of the Tasks extension; declare it in params._meta["io.modelcontextprotocol/clientCapabilities"].extensions["${TASKS_EXTENSION}"] ({})`,
        {
          requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
        },
      );
    }
    const taskId = params.taskId;
    if (typeof taskId !== 'string')
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: ${method} needs params.taskId, the taskId a run answered with (a string)`,
      );
    if (method === 'tasks/get') return this.mcpTasks.get(taskId, declaresElicitation(envelope.capabilities));
    if (method === 'tasks/cancel') return this.mcpTasks.cancel(taskId);
    return this.mcpTasks.update(taskId, params.inputResponses, from);
  }
}

/** How long a run's (valid) arguments asked it to wait for its task: its wait_seconds, or the default. */
function waitSecondsOf(args: unknown): unknown {
  return (isObject(args) ? args.wait_seconds : undefined) ?? DEFAULT_WAIT_SECONDS;
}

/**
 * What a run's retry waits for, as status: the same task, for as long as the run asked to wait;
 * not at all when its client cancelled a form (`now`: the caller hears at once that it waits).
 */
function resumedWait(args: unknown, taskId: string, now: boolean): Loose {
  const given = isObject(args) ? args : {};
  return {
    id: taskId,
    wait_seconds: now ? 0 : waitSecondsOf(args),
    ...(given.wait_for === undefined ? {} : { wait_for: given.wait_for }),
    ...(given.wait_for_port === undefined ? {} : { wait_for_port: given.wait_for_port }),
  };
}

/** `result` with `notes` (on answers that came too late) first in its text and in its structured notes. */
function withNotes(result: CallToolResult, notes: string[]): CallToolResult {
  if (notes.length === 0) return result;
  const [first, ...rest] = result.content;
  const content = [{ type: 'text' as const, text: [...notes, first?.text ?? ''].join('\n') }, ...rest];
  if (result.isError === true) return { ...result, content };
  const given: unknown = result.structuredContent.notes;
  const before = Array.isArray(given) ? (given as string[]) : [];
  const structuredContent = { ...result.structuredContent, notes: [...notes, ...before] };
  return { ...result, content, structuredContent };
}

/** What the transport refuses before the message is read: media types, batches, and malformed messages. */
function checkTransport(req: IncomingMessage, body: unknown): RpcError | null {
  const media = mediaTypeRefusal(req);
  if (media !== null) return media;
  if (Array.isArray(body))
    return refusal(
      INVALID_REQUEST,
      'Invalid Request: MCP 2026-07-28 has no batches; send each request in a POST of its own',
    );
  const problem = checkMessage(body);
  if (problem !== null) return refusal(INVALID_REQUEST, `Invalid Request: ${problem}`);
  if (!isObject(body) || typeof body.method !== 'string')
    return refusal(INVALID_REQUEST, 'Invalid Request: a client sends requests and notifications only');
  return null;
}
