// A raw client of MCP 2026-07-28 over real HTTP: each request a POST of its own with the _meta and
// the headers the spec asks for, any of which a test can leave out or get wrong on purpose.
import { request } from 'undici';

export const MODERN_VERSION = '2026-07-28';
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

export interface ModernOptions {
  /** The client's capabilities in _meta (default: {}, no extension). */
  capabilities?: Record<string, unknown>;
  /** Declares the Tasks extension in the capabilities. */
  tasks?: boolean;
  /** Replaces the _meta (undefined: no _meta at all). */
  meta?: Record<string, unknown> | undefined;
  /** Headers beside or instead of the standard ones (a value of undefined removes one). */
  headers?: Record<string, string | undefined>;
  id?: string | number;
  /** Aborts the request: its connection is closed, as a client that hangs up does. */
  signal?: AbortSignal;
}

export interface ModernAnswer {
  status: number;
  body: any;
}

let nextId = 1;

/** The _meta every 2026-07-28 request carries. */
export function modernMeta(capabilities: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'hive-bash-test', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
}

/** Sends one request; returns the HTTP status and the parsed body (the text when it is not JSON). */
export async function modernRequest(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernOptions = {},
): Promise<ModernAnswer> {
  const capabilities = options.tasks
    ? { ...options.capabilities, extensions: { [TASKS_EXTENSION]: {} } }
    : (options.capabilities ?? {});
  const meta = 'meta' in options ? options.meta : modernMeta(capabilities);
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  const headers: Record<string, string | undefined> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN_VERSION,
    'mcp-method': method,
    ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    ...options.headers,
  };
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: options.id ?? nextId++,
    method,
    params: meta === undefined ? params : { ...params, _meta: meta },
  });
  const sent = Object.fromEntries(
    Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const res = await request(url, { method: 'POST', headers: sent, body, signal: options.signal });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // left as text
  }
  return { status: res.statusCode, body: parsed };
}

/** The result of a request that must succeed (HTTP 200, no error). */
export async function modernResult(
  url: string,
  method: string,
  params: Record<string, unknown> = {},
  options: ModernOptions = {},
): Promise<any> {
  const answer = await modernRequest(url, method, params, options);
  if (answer.status !== 200 || answer.body?.error !== undefined) {
    throw new Error(`${method} failed: ${answer.status} ${JSON.stringify(answer.body).slice(0, 500)}`);
  }
  return answer.body.result;
}
