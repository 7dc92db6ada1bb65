// Builds the MCP server for one session: the tool registry behind tools/list and tools/call.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { HiveError, ToolInputError, UnknownToolError, type ErrorBody } from '../../errors.js';
import { listedTool, parseToolInput, type ToolContext, type ToolDefinition } from './tool.js';

export const SERVER_NAME = 'bash';

const INSTRUCTIONS = [
  'Runs shell commands as background tasks. run starts one and returns its result if it finishes within wait_seconds;',
  'otherwise it keeps running and its end reaches you as a notification, so there is no need to poll.',
  'status shows a task, kill stops it and everything it started, list shows what exists.',
].join(' ');

export interface ToolRegistry {
  createServer(): Server;
}

/** Lists the tools once and returns a factory of per-session servers that share them. */
export function createToolRegistry(tools: ToolDefinition[], context: ToolContext, version: string, log: Logger): ToolRegistry {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listing = { tools: tools.map(listedTool) };

  const callTool = async (name: string, args: unknown): Promise<CallToolResult> => {
    const tool = byName.get(name);
    try {
      if (!tool) throw new UnknownToolError(name, [...byName.keys()]);
      const result = await tool.handler(parseToolInput(tool, args), context);
      // What the answer shows reaches the registry before the answer reaches the caller.
      context.tasks.commit();
      return { content: [{ type: 'text', text: result.text }], structuredContent: result.structured };
    } catch (error) {
      if (error instanceof ToolInputError) return errorResult({ code: error.code, message: error.message });
      log.error({ err: error, tool: name }, 'tool call failed');
      const code = error instanceof HiveError ? error.code : 'ERR_INTERNAL';
      return errorResult({ code, message: `internal error in ${name}: ${(error as Error).message}` });
    }
  };

  return {
    createServer() {
      const server = new Server({ name: SERVER_NAME, version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
      server.setRequestHandler(ListToolsRequestSchema, () => listing);
      server.setRequestHandler(CallToolRequestSchema, (request) => callTool(request.params.name, request.params.arguments));
      return server;
    },
  };
}

/** A refused or failed call: the message as text, and `{error: {code, message}}` as structured content. */
function errorResult(error: ErrorBody): CallToolResult {
  return { content: [{ type: 'text', text: error.message }], structuredContent: { error }, isError: true };
}
