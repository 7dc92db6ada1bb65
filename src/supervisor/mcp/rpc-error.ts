// JSON-RPC errors the MCP layer answers with, by code, and the HTTP status each takes in the
// 2026-07-28 era (the SDK v2's table: refusals before dispatch are 4xx, a handler's error is 200).
import type { ServerResponse } from 'node:http';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** 2026-07-28: the HTTP headers disagree with the body, or a required one is missing. */
export const HEADER_MISMATCH = -32020;
/** 2026-07-28: the request needs a client capability (an extension) it did not declare. */
export const MISSING_CLIENT_CAPABILITY = -32021;
/** 2026-07-28: the protocol version the request names is not served here. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/**
 * A JSON-RPC error to answer a request with. The 1.x SDK's protocol layer answers a handler's
 * thrown error with its `code`, `message` and `data`, so one class serves both eras.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    /** The HTTP status in the 2026-07-28 era. */
    readonly status = 200,
  ) {
    super(message);
  }
}

/** A refusal of the request as a whole, before any handler ran: its HTTP status goes with its code. */
export function refusal(code: number, message: string, data?: unknown): RpcError {
  return new RpcError(code, message, data, code === METHOD_NOT_FOUND ? 404 : 400);
}

/** Writes a JSON-RPC response, with the id of the request it answers (null when it had none usable). */
export function sendRpcResponse(
  res: ServerResponse,
  status: number,
  id: string | number | null,
  answer: { result: unknown } | { error: RpcError },
): void {
  const body =
    'result' in answer
      ? { jsonrpc: '2.0', id, result: answer.result }
      : {
          jsonrpc: '2.0',
          id,
          error: {
            code: answer.error.code,
            message: answer.error.message,
            ...(answer.error.data === undefined ? {} : { data: answer.error.data }),
          },
        };
  sendJsonText(res, status, JSON.stringify(body));
}

/**
 * Writes `text` (JSON) as the whole answer in one end(): its length counted once, so node:http
 * frames it with Content-Length instead of chunks, and the headers as a flat list (`extra`, name
 * and value in turn, go after content-type).
 */
export function sendJsonText(res: ServerResponse, status: number, text: string, extra: readonly string[] = []): void {
  res
    .writeHead(status, [
      'content-type',
      'application/json',
      ...extra,
      'content-length',
      String(Buffer.byteLength(text)),
    ])
    .end(text);
}
