// Checks a JSON-RPC message as the SDK's protocol layer will (its strict request, notification,
// result and error schemas), without zod: a message that layer would drop unanswered is refused
// here, with the reason, so that every request gets an answer.
import { isObject, type Loose } from './eras.js';

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);
const RELATED_TASK_KEY = 'io.modelcontextprotocol/related-task';

// The SDK's ids and progress tokens are strings or safe integers (zod's int): 2^53 and beyond are not.
const isRequestId = (value: unknown) => typeof value === 'string' || Number.isSafeInteger(value);

/** The id of `message` when it is one a response can carry, else null. */
export function usableId(message: unknown): string | number | null {
  const id = isObject(message) ? message.id : undefined;
  return isRequestId(id) ? (id as string | number) : null;
}

/** Why `value` is not a JSON-RPC 2.0 message the protocol layer takes, or null when it is one. */
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

/** Why the params of a method this server serves do not fit it (answered -32602), or null. */
export function checkKnownParams(message: { method?: unknown; params?: unknown }): string | null {
  const params = message.params as Loose | undefined;
  if (message.method === 'tools/call') {
    if (params === undefined || typeof params.name !== 'string')
      return "tools/call needs params.name, the tool's name as a string";
    if (params.arguments !== undefined && !isObject(params.arguments))
      return 'tools/call params.arguments must be an object of named fields';
  }
  if (
    message.method === 'tools/list' &&
    params !== undefined &&
    params.cursor !== undefined &&
    typeof params.cursor !== 'string'
  ) {
    return 'tools/list params.cursor must be a string';
  }
  return null;
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
