// The two eras of MCP served on /mcp, and which one a POST belongs to: 2026-07-28 (stateless, every
// request carries its version in params._meta) or 2025-11-25 and before (initialize, sessions).
// What streamable HTTP asks of a POST in both eras (its media types) is checked here too.
import type { IncomingMessage } from 'node:http';
import { isObject, type Loose } from './json-object.js';
import { transportRefusal, type RpcError } from './json-rpc.js';

/** The first, and so far only, protocol version of the stateless era. */
export const STATELESS_PROTOCOL_VERSION = '2026-07-28';
export const STATELESS_PROTOCOL_VERSIONS: readonly string[] = [STATELESS_PROTOCOL_VERSION];
/** The versions a session serves, newest first: the one an initialize names, else the newest. */
export const SESSION_PROTOCOL_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
];

export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
export const CLIENT_INFO_META = 'io.modelcontextprotocol/clientInfo';
export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

/** A version of the stateless era: dated 2026-07-28 or later (as the SDK v2 tells them apart). */
export function isStatelessVersion(version: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(version) && version >= STATELESS_PROTOCOL_VERSION;
}

/** The request's `params._meta`, when it is an object. */
export function requestMeta(message: unknown): Loose | undefined {
  const params = isObject(message) ? message.params : undefined;
  const meta = isObject(params) ? params._meta : undefined;
  return isObject(meta) ? meta : undefined;
}

/** One header's value (node:http joins repeated custom headers with ", "). */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * Whether a POST is of the stateless era. As in the SDK v2 (body first): a message whose _meta
 * names a protocol version, or a request whose MCP-Protocol-Version header names a version of
 * that era (it is then refused for what its body lacks). A batch is the session era's unless one
 * of its members makes that claim (it is then refused: the stateless era has no batches).
 * Everything else, initialize and sessions included, is the session era's.
 */
export function isStatelessRequest(req: IncomingMessage, body: unknown): boolean {
  if (req.method !== 'POST') return false;
  if (Array.isArray(body)) return body.some((member) => claimsVersion(member));
  if (!isObject(body) || typeof body.method !== 'string') return false;
  if (claimsVersion(body)) return true;
  const header = headerOf(req, 'mcp-protocol-version');
  return header !== undefined && isStatelessVersion(header);
}

function claimsVersion(message: unknown): boolean {
  const meta = requestMeta(message);
  return meta !== undefined && PROTOCOL_VERSION_META in meta;
}

/** Why a POST's Accept or Content-Type is refused (406, 415), or null; the same in both eras. */
export function mediaTypeRefusal(req: IncomingMessage): RpcError | null {
  const accept = req.headers.accept ?? '';
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    return transportRefusal(406, 'Not Acceptable: Client must accept both application/json and text/event-stream');
  // application/json by its parsed media type (parameters such as charset allowed), never a substring.
  const type = req.headers['content-type'];
  if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== 'application/json')
    return transportRefusal(415, 'Unsupported Media Type: Content-Type must be application/json');
  return null;
}
