// The calls of a 2025-era session that need nothing of the SDK's protocol layer, answered without
// it: tools/call and ping in their plain shape. The layer would check each message against its zod
// schemas (the JSON-RPC envelope, then the request twice, then the tool's result), make an
// AbortController and wrap the handler in several promises: a third of the main thread's time per
// status call in a profile (bench/README.md, issue 25). The answers are the ones it gives, byte for
// byte: the same members in the same order. Anything else (params with _meta or task, an argument
// named __proto__, which its record schema drops) still goes through the layer.
import type { IncomingMessage } from 'node:http';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { isObject, type Loose } from './eras.js';
import type { ToolRegistry } from './server.js';

/** The answer to `message` (which request `from` carried) when it is a call this module answers, else null (the protocol layer's). */
export type DirectAnswerer = (
  message: {
    id?: unknown;
    method?: unknown;
    params?: unknown;
  },
  from: IncomingMessage,
) => Promise<JSONRPCMessage> | null;

export function directAnswerer(call: ToolRegistry['call']): DirectAnswerer {
  return (message, from) => {
    const id = message.id as RequestId | undefined;
    if (id === undefined) return null;
    const params = message.params;
    if (message.method === 'ping') return params === undefined ? Promise.resolve(response(id, {})) : null;
    if (message.method !== 'tools/call' || !isObject(params) || !plainCall(params)) return null;
    return call(params.name as string, params.arguments, from).then(
      (result) => response(id, result),
      (error: { code?: unknown; message?: string; data?: unknown }) => errorResponse(id, error),
    );
  };
}

/** Params of only a name (a string) and arguments (an object without an own __proto__, or none). */
function plainCall(params: Loose): boolean {
  for (const key in params) if (key !== 'name' && key !== 'arguments') return false;
  const args = params.arguments;
  return (
    typeof params.name === 'string' &&
    (args === undefined || (isObject(args) && !Object.prototype.hasOwnProperty.call(args, '__proto__')))
  );
}

// The protocol layer's own shapes: the result first, and an error's code, message and data.
const response = (id: RequestId, result: unknown) => ({ result, jsonrpc: '2.0', id }) as unknown as JSONRPCMessage;

function errorResponse(id: RequestId, error: { code?: unknown; message?: string; data?: unknown }): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isSafeInteger(error.code) ? error.code : -32603,
      message: error.message ?? 'Internal error',
      ...(error.data !== undefined && { data: error.data }),
    },
  } as JSONRPCMessage;
}
