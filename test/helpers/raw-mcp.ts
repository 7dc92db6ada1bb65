// The raw JSON-RPC of a 2025 MCP session, for tests and benches that speak to an /mcp endpoint
// without the SDK's client: the headers every POST carries, and the initialize that opens a session.

/** The headers of a POST to /mcp: a JSON body, and both answer forms accepted. */
export const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A 2025-06-18 initialize request, id 1. */
export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
