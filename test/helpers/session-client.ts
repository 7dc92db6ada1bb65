// A 2025-11-25 session over raw HTTP, for tests that read what its GET stream carries: initialize
// (as a client, with capabilities), notifications/initialized, then requests whose whole JSON-RPC
// answers are returned, and tool calls whose structured content is.
import { request } from 'undici';
import { INITIALIZE, MCP_HEADERS } from './raw-mcp.js';

export interface Session {
  headers: Record<string, string>;
  initialized: any;
  /** The whole JSON-RPC answer to `method` with `params`. */
  rpc(method: string, params: Record<string, unknown>): Promise<any>;
  /** The structured content of a tools/call's result. */
  call(name: string, args: Record<string, unknown>): Promise<any>;
}

let nextId = 100;

/** Opens a 2025-11-25 session as `clientInfo` with `capabilities`, and sends notifications/initialized. */
export async function openSession(
  url: string,
  clientInfo: { name: string; version: string },
  capabilities: Record<string, unknown> = {},
): Promise<Session> {
  const params = { protocolVersion: '2025-11-25', capabilities, clientInfo };
  const init = await request(url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({ ...INITIALIZE, params }),
  });
  const { result: initialized } = (await init.body.json()) as { result: any };
  const headers = {
    ...MCP_HEADERS,
    'mcp-session-id': String(init.headers['mcp-session-id']),
    'mcp-protocol-version': '2025-11-25',
  };
  const note = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
  await (await request(url, { method: 'POST', headers, body: note })).body.text();
  const rpc = async (method: string, rpcParams: Record<string, unknown>) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: rpcParams });
    return (await (await request(url, { method: 'POST', headers, body })).body.json()) as any;
  };
  const call = async (name: string, args: Record<string, unknown>) =>
    (await rpc('tools/call', { name, arguments: args })).result.structuredContent;
  return { headers, initialized, rpc, call };
}
