// The two eras of MCP served on /mcp, and which one a POST belongs to: 2026-07-28 (stateless, every
// request carries its version in params._meta) or 2025-11-25 and before (initialize, sessions).
import type { IncomingMessage } from 'node:http';

/** The first, and so far only, protocol version of the stateless era. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = [MODERN_PROTOCOL_VERSION];

export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
export const CLIENT_INFO_META = 'io.modelcontextprotocol/clientInfo';
export const SERVER_INFO_META = 'io.modelcontextprotocol/serverInfo';

/** A JSON object whose members are not known yet. */
export type Loose = Record<string, unknown>;
export const isObject = (value: unknown): value is Loose =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A version of the stateless era: dated 2026-07-28 or later (as the SDK v2 tells them apart). */
export function isModernVersion(version: string): boolean {
  return version >= MODERN_PROTOCOL_VERSION;
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
 * that era (it is then refused for what its body lacks). A batch is the old era's unless one of
 * its members makes that claim (it is then refused: the new era has no batches). Everything else,
 * initialize and sessions included, is the old era's, served as it always was.
 */
export function isModernRequest(req: IncomingMessage, body: unknown): boolean {
  if (req.method !== 'POST') return false;
  if (Array.isArray(body)) return body.some((member) => claimsVersion(member));
  if (!isObject(body) || typeof body.method !== 'string') return false;
  if (claimsVersion(body)) return true;
  const header = headerOf(req, 'mcp-protocol-version');
  return header !== undefined && isModernVersion(header);
}

function claimsVersion(message: unknown): boolean {
  const meta = requestMeta(message);
  return meta !== undefined && PROTOCOL_VERSION_META in meta;
}
