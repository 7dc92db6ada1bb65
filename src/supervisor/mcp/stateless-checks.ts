// The checks MCP 2026-07-28 asks of a server before it serves a request: the per-request _meta
// (version, client capabilities), the headers that mirror the body (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name), and the version itself. Each refusal names what was wrong and what is accepted.
import type { IncomingMessage } from 'node:http';
import { echoValue } from '../../shared/echo.js';
import {
  CLIENT_CAPABILITIES_META,
  CLIENT_INFO_META,
  headerOf,
  PROTOCOL_VERSION_META,
  requestMeta,
  STATELESS_PROTOCOL_VERSIONS,
} from './protocol-versions.js';
import { HEADER_MISMATCH, INVALID_PARAMS, refusal, UNSUPPORTED_PROTOCOL_VERSION, type RpcError } from './json-rpc.js';
import { isObject } from './json-object.js';

/** The body member each method's Mcp-Name header mirrors (the spec's table, and the Tasks extension's). */
const NAME_SOURCE: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};
const ECHO_CHARS = 80;
const BASE64_SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

/** What a request declared in its _meta, once it passed the checks. */
export interface Envelope {
  version: string;
  capabilities: Record<string, unknown>;
}

/** Checks a request (a JSON-RPC request with a string method) of the stateless era; returns its envelope or the refusal. */
export function checkStatelessRequest(
  req: IncomingMessage,
  message: { method: string; params?: unknown },
): Envelope | RpcError {
  const envelope = checkEnvelope(message);
  if (!('version' in envelope)) return envelope;
  const headerVersion = headerOf(req, 'mcp-protocol-version');
  if (headerVersion === undefined) {
    return mismatch(
      `the MCP-Protocol-Version header is required and must repeat params._meta["${PROTOCOL_VERSION_META}"] (${echo(envelope.version)})`,
    );
  }
  if (headerVersion !== envelope.version) {
    return mismatch(
      `the MCP-Protocol-Version header ${echo(headerVersion)} does not match params._meta["${PROTOCOL_VERSION_META}"] ${echo(envelope.version)}`,
    );
  }
  const methodHeader = headerOf(req, 'mcp-method');
  if (methodHeader === undefined)
    return mismatch(`the Mcp-Method header is required and must repeat the method (${echo(message.method)})`);
  if (methodHeader !== message.method)
    return mismatch(`the Mcp-Method header ${echo(methodHeader)} does not match the method ${echo(message.method)}`);
  if (!STATELESS_PROTOCOL_VERSIONS.includes(envelope.version)) {
    return refusal(
      UNSUPPORTED_PROTOCOL_VERSION,
      `Unsupported protocol version: ${echo(envelope.version)}; this server serves ${STATELESS_PROTOCOL_VERSIONS.join(', ')} per request, and 2025-11-25 and earlier after initialize`,
      {
        supported: [...STATELESS_PROTOCOL_VERSIONS],
        requested: envelope.version,
      },
    );
  }
  return checkNameHeader(req, message) ?? envelope;
}

function checkEnvelope(message: { params?: unknown }): Envelope | RpcError {
  const meta = requestMeta(message);
  const required = `params._meta with "${PROTOCOL_VERSION_META}" (a version string such as "${STATELESS_PROTOCOL_VERSIONS[0]}") and "${CLIENT_CAPABILITIES_META}" (an object)`;
  if (meta === undefined) {
    const params = isObject(message) ? message.params : undefined;
    const got =
      params === undefined
        ? 'no params'
        : !isObject(params)
          ? 'params that are not an object'
          : '_meta' in params
            ? 'a _meta that is not an object'
            : 'no params._meta';
    return invalid(`a request of MCP ${STATELESS_PROTOCOL_VERSIONS[0]} needs ${required}; got ${got}`);
  }
  const version = meta[PROTOCOL_VERSION_META];
  if (typeof version !== 'string')
    return invalid(
      `params._meta["${PROTOCOL_VERSION_META}"] must be a protocol version string such as "${STATELESS_PROTOCOL_VERSIONS[0]}"; got ${echoValue(version)}`,
    );
  const capabilities = meta[CLIENT_CAPABILITIES_META];
  if (!isObject(capabilities))
    return invalid(
      `params._meta["${CLIENT_CAPABILITIES_META}"] must be an object of the client's capabilities ({} for none); got ${echoValue(capabilities)}`,
    );
  const info = meta[CLIENT_INFO_META];
  if (info !== undefined && !(isObject(info) && typeof info.name === 'string' && typeof info.version === 'string')) {
    return invalid(
      `params._meta["${CLIENT_INFO_META}"], when given, must be an object with a string name and version; got ${echoValue(info)}`,
    );
  }
  return { version, capabilities };
}

/** Mcp-Name must repeat the name, uri or taskId of the body (decoded from its base64 form first). */
function checkNameHeader(req: IncomingMessage, message: { method: string; params?: unknown }): RpcError | null {
  const member = Object.hasOwn(NAME_SOURCE, message.method) ? NAME_SOURCE[message.method]! : undefined;
  const value = member !== undefined && isObject(message.params) ? message.params[member] : undefined;
  if (typeof value !== 'string') return null; // nothing to mirror: the params check refuses what is missing
  const header = headerOf(req, 'mcp-name');
  if (header === undefined)
    return mismatch(
      `the Mcp-Name header is required for ${message.method} and must repeat params.${member} (${echo(value)})`,
    );
  const encoded = header.startsWith('=?base64?') && header.endsWith('?=');
  const match = encoded ? BASE64_SENTINEL.exec(header) : null;
  if (encoded && match === null)
    return mismatch(`the Mcp-Name header ${echo(header)} is not valid =?base64?...?= (base64 of the UTF-8 value)`);
  const decoded = match === null ? header : Buffer.from(match[1]!, 'base64').toString('utf8');
  if (decoded !== value)
    return mismatch(`the Mcp-Name header ${echo(decoded)} does not match params.${member} ${echo(value)}`);
  return null;
}

const mismatch = (message: string) => refusal(HEADER_MISMATCH, `Header mismatch: ${message}`);
const invalid = (message: string) => refusal(INVALID_PARAMS, `Invalid params: ${message}`);

function echo(text: string): string {
  return JSON.stringify(text.length > ECHO_CHARS ? `${text.slice(0, ECHO_CHARS)}...` : text);
}
