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

/** The tools whose results have a verbose form. */
const VERBOSE_TOOLS = new Set(['run', 'status']);

/**
 * A call's arguments as tests send them: tests read a task whole (its pid, paths, nulls), so run
 * and status ask for verbose results unless a test says otherwise (result-size.test.ts reads the default).
 */
export function askWhole(name: string, args: Record<string, unknown>): Record<string, unknown> {
  return VERBOSE_TOOLS.has(name) && !('verbose' in args) ? { ...args, verbose: true } : args;
}
