// The tools both eras serve, and the one function that calls a tool for either: tools/list's
// listing, made once, and tools/call (the arguments checked against the tool's schema, the handler
// run, its result shaped for a model's context, a refusal or failure as an isError result).
import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { HiveError, ToolRefusal } from '../../errors.js';
import { END_REACHES, type EndReach } from './end-notice.js';
import { toolInstructions, type ToolAdvice } from './approval-advice.js';
import { INVALID_PARAMS, RpcError } from './json-rpc.js';
import { isObject, type Loose } from './json-object.js';
import {
  listedTool,
  omitNulls,
  parseToolInput,
  type CallOptions,
  type ErrorBody,
  type ToolContext,
  type ToolDefinition,
} from './tool.js';

export const SERVER_NAME = 'bash';
const MAX_NAME_ECHO = 80;

/** A tool call's result as MCP carries it. */
export interface CallToolResult {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Loose;
  isError?: true;
}

/** The tools as tools/list shows them. */
export interface ToolListing {
  tools: Array<ReturnType<typeof listedTool>>;
}

export interface ToolRegistry {
  /** The tools as tools/list shows them to a client whose tasks' ends reach its agent as `reach` says, made once each. */
  listing(reach: EndReach): ToolListing;
  /** The server's instructions to the agent of such a client (initialize, server/discover). */
  instructions(reach: EndReach): string;
  /** Who answers (initialize, server/discover). */
  readonly serverInfo: { name: string; version: string };
  /** Calls a tool for the request `from`: a result (isError for a refusal), or an RpcError for a tool that does not exist. */
  call(name: string, args: unknown, from: IncomingMessage, options?: CallOptions): Promise<CallToolResult>;
}

/**
 * Lists the tools once for each way a task's end may reach a client's agent, with the advice that
 * holds here, and returns the registry both eras serve them from.
 */
export function createToolRegistry(
  tools: ToolDefinition[],
  context: ToolContext,
  version: string,
  log: Logger,
  advice: ToolAdvice,
): ToolRegistry {
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listings = new Map(
    END_REACHES.map((reach) => [reach, { tools: tools.map((tool) => listedTool(tool, { ...advice, reach })) }]),
  );
  const texts = new Map(END_REACHES.map((reach) => [reach, toolInstructions({ ...advice, reach })]));
  // zod compiles an object schema's check (a generated function) at its first parse: each tool's
  // is compiled here, at the start, not in its first call (a first kill's took 0.55 to 0.84 ms of
  // the 1.2 to 1.7 ms from its request to its cgroup.kill; six tools, 6 ms in a bare Node).
  for (const tool of tools) tool.inputSchema.safeParse({});

  const call = async (
    name: string,
    args: unknown,
    from: IncomingMessage,
    options: CallOptions = {},
  ): Promise<CallToolResult> => {
    const tool = byName.get(name);
    // A protocol error in both eras, as 2026-07-28 says: the tool list the client holds is stale.
    if (!tool)
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: unknown tool ${JSON.stringify(name.length > MAX_NAME_ECHO ? `${name.slice(0, MAX_NAME_ECHO)}...` : name)} in params.name; this server has: ${[...byName.keys()].join(', ')}`,
      );
    try {
      const input = parseToolInput(tool, args);
      const result = await tool.handler(input, context, from, options);
      // What the answer shows reaches the registry before the answer reaches the caller.
      context.tasks.commit();
      // Sized for a model's context: verbose (run, status) asks for every member, null or not.
      const verbose = (input as { verbose?: boolean }).verbose === true;
      const structured = verbose ? result.structured : omitNulls(result.structured);
      return {
        content: [{ type: 'text', text: result.text }],
        structuredContent: structured as Loose,
      };
    } catch (error) {
      if (error instanceof ToolRefusal) return errorResult({ code: error.code, message: error.message });
      log.error({ err: error, tool: name }, 'tool call failed');
      const code = error instanceof HiveError ? error.code : 'ERR_INTERNAL';
      return errorResult({ code, message: `internal error in ${name}: ${(error as Error).message}` });
    }
  };

  return {
    listing: (reach) => listings.get(reach)!,
    instructions: (reach) => texts.get(reach)!,
    serverInfo: { name: SERVER_NAME, version },
    call,
  };
}

/** A refused or failed call: the message as text, and `{error: {code, message}}` as structured content. */
export function errorResult(error: ErrorBody): CallToolResult {
  return { content: [{ type: 'text', text: error.message }], structuredContent: { error }, isError: true };
}

/** Why the params of tools/call or tools/list do not fit the method (answered INVALID_PARAMS), or null. */
export function checkToolParams(message: { method: string; params?: Loose }): string | null {
  const params = message.params;
  if (message.method === 'tools/call') {
    if (params === undefined || typeof params.name !== 'string')
      return "tools/call needs params.name, the tool's name as a string";
    if (params.arguments !== undefined && !isObject(params.arguments))
      return 'tools/call params.arguments must be an object of named fields';
  }
  if (message.method === 'tools/list' && params?.cursor !== undefined && typeof params.cursor !== 'string')
    return 'tools/list params.cursor must be a string';
  return null;
}
