// What a session of the 2025 era (2025-11-25 and before) answers: initialize, ping, tools/list and
// tools/call; any other request is METHOD_NOT_FOUND. Notifications (notifications/initialized among
// them) need no answer; the session endpoint handles notifications/cancelled. Every session offers
// Claude Code's channels (experimental "claude/channel"): a task's end, pushed on its GET stream.
import type { IncomingMessage } from 'node:http';
import type { EndReach } from './advice.js';
import { CHANNEL_CAPABILITY, CHANNEL_CLIENT } from './channel-clients.js';
import { SESSION_PROTOCOL_VERSIONS } from './eras.js';
import { METHOD_NOT_FOUND, RpcError, type RpcMessage } from './json-rpc.js';
import { isObject } from './loose.js';
import type { ToolRegistry } from './tool-registry.js';

const SERVED = ['initialize', 'ping', 'tools/list', 'tools/call'];
const MAX_METHOD_ECHO = 80;

/**
 * The result of a session's `request`, which the HTTP request `from` carried; throws an RpcError to
 * refuse it. `reach` is how a task's end reaches the session's agent (reachOfSession of its initialize).
 */
export function answerSessionRequest(
  request: RpcMessage,
  tools: ToolRegistry,
  from: IncomingMessage,
  reach: EndReach,
): unknown {
  const params = request.params ?? {};
  switch (request.method) {
    case 'initialize':
      return {
        protocolVersion: negotiatedVersion(params.protocolVersion),
        capabilities: { tools: {}, experimental: { [CHANNEL_CAPABILITY]: {} } },
        serverInfo: tools.serverInfo,
        instructions: tools.instructions(reach),
      };
    case 'ping':
      return {};
    case 'tools/list':
      return tools.listing(reach);
    case 'tools/call':
      // A `task` member asks for an MCP task, which this era's sessions do not offer: the call is
      // answered as a plain one, as the 2025-11-25 Tasks utility says a receiver without it does.
      return tools.call(params.name as string, params.arguments, from);
  }
  throw new RpcError(
    METHOD_NOT_FOUND,
    `Method not found: ${JSON.stringify(request.method.slice(0, MAX_METHOD_ECHO))}; a session serves ${SERVED.join(', ')}`,
  );
}

/** The version a session speaks: the one the client's initialize names when it is served here, else the newest. */
function negotiatedVersion(requested: unknown): string {
  return typeof requested === 'string' && SESSION_PROTOCOL_VERSIONS.includes(requested)
    ? requested
    : SESSION_PROTOCOL_VERSIONS[0]!;
}

/**
 * How a task's end reaches the agent of a session opened by an initialize of `params` (checked):
 * pushed, to Claude Code (which shows channel events) or a client that declares the channel
 * capability itself; else it waits (a 2025 session offers no tasks of the Tasks extension).
 */
export function reachOfSession(params: unknown): EndReach {
  if (!isObject(params)) return 'wait';
  const { capabilities, clientInfo } = params;
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
