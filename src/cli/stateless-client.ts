// The CLI's side of MCP 2026-07-28: whether the daemon speaks it (server/discover), and a tool call
// as one POST with the per-request _meta and headers, no session to open or close.
import { VERSION } from '../shared/version.js';
import { randomUUID } from 'node:crypto';

export const STATELESS_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'hive-bash', version: VERSION };

/** An answer whose HTTP status is itself the failure (401, 404, 5xx), for the caller to describe. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}: ${body.split('\n')[0]}`);
  }
}

/** A JSON-RPC error the daemon answered a request with. */
export class RpcAnswerError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface ToolCallResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * Whether the daemon at `url` serves 2026-07-28: its server/discover answers and lists it. Any
 * other answer but a refused token (a 400 of an older daemon that wants initialize first) means
 * the session era, as the spec's fallback says.
 */
export async function offersStateless(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<boolean> {
  const { status, body, text } = await post(url, headers, 'server/discover', {}, timeoutMs);
  if (status === 401 || status === 403) throw new HttpStatusError(status, text);
  const versions = (body?.result as { supportedVersions?: unknown } | undefined)?.supportedVersions;
  return status === 200 && Array.isArray(versions) && versions.includes(STATELESS_VERSION);
}

/** Calls tool `name` in 2026-07-28; the tool's result, or an RpcAnswerError / HttpStatusError. */
export async function callStatelessTool(
  url: URL,
  headers: Record<string, string>,
  name: string,
  args: Record<string, unknown>,
  timeoutMs: number,
): Promise<ToolCallResult> {
  const { status, body, text } = await post(url, headers, 'tools/call', { name, arguments: args }, timeoutMs);
  if (body?.error !== undefined) throw new RpcAnswerError(body.error.code, String(body.error.message));
  if (status !== 200 || body?.result === undefined) throw new HttpStatusError(status, text);
  return body.result as ToolCallResult;
}

/** A JSON-RPC answer as it came: a result, or an error with its code and message. */
interface RpcAnswer {
  result?: unknown;
  error?: { code: number; message: unknown };
}

async function post(
  url: URL,
  headers: Record<string, string>,
  method: string,
  params: Record<string, unknown>,
  timeoutMs: number,
) {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': STATELESS_VERSION,
    'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const name: Record<string, string> =
    typeof params.name === 'string' ? { 'mcp-name': encodeHeaderValue(params.name) } : {};
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': STATELESS_VERSION,
      'mcp-method': method,
      ...name,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: randomUUID(), method, params: { ...params, _meta: meta } }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  let body: RpcAnswer | undefined;
  try {
    body = JSON.parse(text) as RpcAnswer;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** A header value as the spec carries it: as is when plain visible ASCII, else =?base64?...?=. */
function encodeHeaderValue(value: string): string {
  const plain =
    /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(value) && !(value.startsWith('=?base64?') && value.endsWith('?='));
  return plain ? value : `=?base64?${Buffer.from(value).toString('base64')}?=`;
}
