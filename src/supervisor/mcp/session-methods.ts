// What a session of the 2025 era (2025-11-25 and before) answers: initialize, ping, tools/list,
// tools/call and, in a session of 2025-11-25 (not one of an older version), the tasks/ methods of
// its Tasks utility (session-tasks.ts); any other request is METHOD_NOT_FOUND. Notifications (notifications/initialized among
// them) need no answer; the session endpoint handles notifications/cancelled. Every session offers
// Claude Code's channels (experimental "claude/channel"): a task's end, pushed on its GET stream.
import type { IncomingMessage } from 'node:http';
import type { EndReach } from './end-notice.js';
import { CHANNEL_CAPABILITY, CHANNEL_CLIENT } from './channel-clients.js';
import { SESSION_PROTOCOL_VERSIONS } from './protocol-versions.js';
import { METHOD_NOT_FOUND, RpcError, type RpcMessage } from './json-rpc.js';
import { isObject } from './json-object.js';
import type { ToolListing, ToolRegistry } from './tool-registry.js';
import { SESSION_TASK_METHODS, SESSION_TASKS_CAPABILITY, TASK_TOOL, type SessionTasks } from './session-tasks.js';

const SERVED = ['initialize', 'ping', 'tools/list', 'tools/call'];
/** Each listing with run marked as one a task may hold (execution.taskSupport), made once. */
const TASK_LISTINGS = new WeakMap<ToolListing, ToolListing>();
const MAX_METHOD_ECHO = 80;

/**
 * The result of a session's `request`, which the HTTP request `from` carried; throws an RpcError to
 * refuse it. `reach` is how a task's end reaches the session's agent (reachOfSession of its
 * initialize); `tasks` serves its MCP tasks, null where none are offered.
 */
export function answerSessionRequest(
  request: RpcMessage,
  tools: ToolRegistry,
  from: IncomingMessage,
  reach: EndReach,
  tasks: SessionTasks | null = null,
): unknown {
  const params = request.params ?? {};
  switch (request.method) {
    case 'initialize':
      return {
        protocolVersion: negotiatedVersion(params.protocolVersion),
        capabilities: {
          tools: {},
          ...(tasks ? { tasks: SESSION_TASKS_CAPABILITY } : {}),
          experimental: { [CHANNEL_CAPABILITY]: {} },
        },
        serverInfo: tools.serverInfo,
        instructions: tools.instructions(reach),
      };
    case 'ping':
      return {};
    case 'tools/list':
      return tasks ? withTaskSupport(tools.listing(reach)) : tools.listing(reach);
    case 'tools/call':
      // Without tasks on offer a `task` member is ignored: the call is answered as a plain one, as
      // the 2025-11-25 Tasks utility says a receiver without them does.
      if (tasks && params.task !== undefined)
        return tasks.create(params, (args) => tools.call(params.name as string, args, from));
      return tools.call(params.name as string, params.arguments, from);
  }
  if (tasks && SESSION_TASK_METHODS.includes(request.method)) return tasks.answer(request.method, params, from);
  throw new RpcError(
    METHOD_NOT_FOUND,
    `Method not found: ${JSON.stringify(request.method.slice(0, MAX_METHOD_ECHO))}; a session serves ${[...SERVED, ...(tasks ? SESSION_TASK_METHODS : [])].join(', ')}`,
  );
}

/** `listing` with run marked as a tool a task may hold, and only run: the others answer at once. */
function withTaskSupport(listing: ToolListing): ToolListing {
  let marked = TASK_LISTINGS.get(listing);
  if (marked === undefined) {
    const tools = listing.tools.map((tool) =>
      tool.name === TASK_TOOL ? { ...tool, execution: { taskSupport: 'optional' as const } } : tool,
    );
    TASK_LISTINGS.set(listing, (marked = { tools }));
  }
  return marked;
}

/** The first version whose sessions have MCP tasks (its Tasks utility). */
export const TASKS_SINCE = '2025-11-25';

/** Whether a session opened by an initialize of `params` (checked) speaks a version with MCP tasks. */
export function speaksTasks(params: unknown): boolean {
  return isObject(params) && negotiatedVersion(params.protocolVersion) >= TASKS_SINCE;
}

/** The version a session speaks: the one the client's initialize names when it is served here, else the newest. */
function negotiatedVersion(requested: unknown): string {
  return typeof requested === 'string' && SESSION_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : SESSION_PROTOCOL_VERSIONS[0]!;
}

/**
 * How a task's end reaches the agent of a session opened by an initialize of `params` (checked):
 * its client reports it, when its session speaks 2025-11-25 and it declares the `tasks` capability
 * (it can hold run as a task); pushed, to Claude Code (which shows channel events) or a client that declares the channel
 * capability itself; else it waits.
 */
export function reachOfSession(params: unknown): EndReach {
  if (!isObject(params)) return 'wait';
  const { capabilities, clientInfo } = params;
  if (isObject(capabilities) && isObject(capabilities.tasks) && speaksTasks(params)) return 'task';
  const experimental = isObject(capabilities) ? capabilities.experimental : undefined;
  if (isObject(experimental) && isObject(experimental[CHANNEL_CAPABILITY])) return 'push';
  return isObject(clientInfo) && clientInfo.name === CHANNEL_CLIENT ? 'push' : 'wait';
}

/** Whether `body` is an initialize request (JSON-RPC, with an id), the only message that opens a session. */
export function isInitializeRequest(body: unknown): boolean {
  return (
    isObject(body) &&
    body.jsonrpc === '2.0' &&
    body.method === 'initialize' &&
    (typeof body.id === 'string' || Number.isSafeInteger(body.id))
  );
}

/** Why an initialize's params do not fit the method (answered INVALID_PARAMS), or null. */
export function checkInitializeParams(params: unknown): string | null {
  if (!isObject(params)) return 'initialize needs params: protocolVersion, capabilities and clientInfo';
  if (typeof params.protocolVersion !== 'string')
    return `initialize params.protocolVersion must be a version string such as "${SESSION_PROTOCOL_VERSIONS[0]}"`;
  if (!isObject(params.capabilities))
    return "initialize params.capabilities must be an object of the client's capabilities ({} for none)";
  const info = params.clientInfo;
  if (!isObject(info) || typeof info.name !== 'string' || typeof info.version !== 'string')
    return 'initialize params.clientInfo must be an object with a string name and version';
  return null;
}
