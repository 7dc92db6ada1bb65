// JSON-RPC 2.0 as /mcp speaks it in both eras: a POST's body parsed, each message checked, the error
// codes by name, and answers and errors written as one JSON body. The HTTP status an error takes
// goes with it: a refusal before dispatch is 4xx, a handler's error is 200 (in both eras).
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { isObject, type Loose } from './json-object.js';

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** Streamable HTTP: a request refused before its messages were read (media types, headers, no session). */
export const TRANSPORT_REFUSED = -32000;
/** Streamable HTTP: the Mcp-Session-Id header names no open session. */
export const SESSION_NOT_FOUND = -32001;
/** A request of a batch whose answer would pass the bytes a batch's answer may have: answered with this instead. */
export const ANSWER_TOO_LARGE = -32010;
/** 2026-07-28: the HTTP headers disagree with the body, or a required one is missing. */
export const HEADER_MISMATCH = -32020;
/** 2026-07-28: the request needs a client capability (an extension) it did not declare. */
export const MISSING_CLIENT_CAPABILITY = -32021;
/** 2026-07-28: the protocol version the request names is not served here. */
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

export type RequestId = string | number;

/** A request or notification that passed checkMessage. */
export interface RpcMessage {
  jsonrpc: '2.0';
  /** Absent in a notification. */
  id?: RequestId;
  method: string;
  params?: Loose;
}

/** An answer to one request: its result, or the error to answer with. */
export type RpcAnswer = { result: unknown } | { error: RpcError };

/** A JSON-RPC error to answer a request with, and the HTTP status it takes when it answers a POST alone. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly status = 200,
  ) {
    super(message);
  }
}

/** A refusal of the request as a whole, before any handler ran: its HTTP status goes with its code. */
export function refusal(code: number, message: string, data?: unknown): RpcError {
  return new RpcError(code, message, data, code === METHOD_NOT_FOUND ? 404 : 400);
}

/** A refusal of the HTTP request by the transport, with the status it names (406, 415, 404...). */
export function transportRefusal(status: number, message: string, code = TRANSPORT_REFUSED): RpcError {
  return new RpcError(code, message, undefined, status);
}

/**
 * The most JSON values (objects, arrays and the members and elements after a first) a body may
 * hold: a run's env of 4,096 variables is about 8,200. JSON.parse of 4 MiB of `[{},{},...]` (1.39
 * million) holds the main thread 182 to 329 ms here (0.45 to 0.61 s on a busy daemon), of 50,000
 * 1.4 to 7.4 ms; counting them first costs 0.2 to 2 ms for that body, 20 ms for 4 MiB of a string.
 */
export const MAX_JSON_VALUES = 50_000;

/** How many objects, arrays and separators (`,`) `text` holds outside its strings; past `max`, max + 1. */
function countJsonValues(text: string, max: number): number {
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length && count <= max; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b || code === 0x2c) count++;
  }
  return count;
}

/** A POST's body as JSON, or the parse error to answer with. */
export function parseBody(text: string): { body: unknown } | RpcError {
  if (countJsonValues(text, MAX_JSON_VALUES) > MAX_JSON_VALUES)
    return refusal(
      INVALID_REQUEST,
      `Invalid request: the body holds more than ${MAX_JSON_VALUES} JSON values (objects, arrays, members and elements); a request holds at most that`,
    );
  try {
    return { body: JSON.parse(text) };
  } catch (error) {
    return refusal(PARSE_ERROR, `Parse error: the body is not JSON (${(error as Error).message})`);
  }
}

/**
 * Runs a request's handler and settles its answer: the result, the RpcError it threw, or, for any
 * other error, INTERNAL_ERROR naming the method (the error is logged: it is a defect).
 */
export async function settle(method: string, handler: () => unknown, log: Logger): Promise<RpcAnswer> {
  try {
    return { result: await handler() };
  } catch (error) {
    if (error instanceof RpcError) return { error };
    log.error({ err: error, method }, 'MCP request failed');
    return { error: new RpcError(INTERNAL_ERROR, `internal error in ${method}: ${(error as Error).message}`) };
  }
}

/** The response object answering request `id` (null when it had none usable). */
export function responseOf(id: RequestId | null, answer: RpcAnswer): Loose {
  if ('result' in answer) return { jsonrpc: '2.0', id, result: answer.result };
  const { code, message, data } = answer.error;
  return { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

/** Writes one response (with `headers`, name and value in turn) as the whole answer. */
export function sendRpcAnswer(
  res: ServerResponse,
  status: number,
  id: RequestId | null,
  answer: RpcAnswer,
  headers: readonly string[] = [],
): void {
  sendJsonText(res, status, JSON.stringify(responseOf(id, answer)), headers);
}

/** Writes `error` as the whole answer, with its own HTTP status. */
export function sendRpcError(
  res: ServerResponse,
  error: RpcError,
  id: RequestId | null = null,
  headers: readonly string[] = [],
): void {
  sendRpcAnswer(res, error.status, id, { error }, headers);
}

/** Writes `body` as JSON, the whole answer (sendJsonText). */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
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

// Ids and progress tokens are strings or safe integers: 2^53 and beyond are not (clients such as
// the SDK's refuse them).
const isRequestId = (value: unknown): value is RequestId => typeof value === 'string' || Number.isSafeInteger(value);

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

/** The id of `message` when it is one a response can carry, else null. */
export function usableId(message: unknown): RequestId | null {
  const id = isObject(message) ? message.id : undefined;
  return isRequestId(id) ? id : null;
}

/** Whether a checked message is a request or notification (not a response, which a server awaits none of). */
export const isCall = (message: unknown): message is RpcMessage => isObject(message) && 'method' in message;

/** Why `value` is not a JSON-RPC 2.0 message (as MCP's schema has them), or null when it is one. */
export function checkMessage(value: unknown): string | null {
  if (!isObject(value)) return 'a message must be a JSON object';
  if (value.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('method' in value) {
    if (typeof value.method !== 'string') return '"method" must be a string';
    const keys = 'id' in value ? REQUEST_KEYS : NOTIFICATION_KEYS;
    if ('id' in value && !isRequestId(value.id)) return '"id" must be a string or an integer';
    return unknownKey(value, keys) ?? checkParams(value.params, 'params');
  }
  if ('result' in value) {
    if (!isRequestId(value.id)) return '"id" must be a string or an integer';
    if (!isObject(value.result)) return '"result" must be an object';
    return unknownKey(value, RESULT_KEYS) ?? checkMeta(value.result._meta, 'result._meta');
  }
  if ('error' in value) {
    if ('id' in value && !isRequestId(value.id)) return '"id" must be a string or an integer';
    const error = value.error;
    if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string')
      return '"error" must be an object with an integer code and a string message';
    return unknownKey(value, ERROR_KEYS);
  }
  return 'a message needs "method" (a request or notification), "result" or "error"';
}

function unknownKey(value: Loose, allowed: Set<string>): string | null {
  const extra = Object.keys(value).find((key) => !allowed.has(key));
  return extra === undefined
    ? null
    : `unknown member ${JSON.stringify(extra.slice(0, 40))}; a message has ${[...allowed].join(', ')}`;
}

function checkParams(params: unknown, where: string): string | null {
  if (params === undefined) return null;
  if (!isObject(params)) return `"${where}" must be an object`;
  return checkMeta(params._meta, `${where}._meta`);
}

function checkMeta(meta: unknown, where: string): string | null {
  if (meta === undefined) return null;
  if (!isObject(meta)) return `"${where}" must be an object`;
  if (meta.progressToken !== undefined && !isRequestId(meta.progressToken))
    return `"${where}.progressToken" must be a string or an integer`;
  const related = meta[RELATED_TASK_KEY];
  if (related !== undefined && !(isObject(related) && typeof related.taskId === 'string'))
    return `"${where}.${RELATED_TASK_KEY}" must be an object with a string taskId`;
  return null;
}
