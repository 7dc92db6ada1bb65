// JSON-RPC envelopes a client could POST, of both MCP eras (2025's sessions, 2026-07-28's _meta and
// its MCP-Protocol-Version, Mcp-Method and Mcp-Name headers): messages right and wrong in every
// member, batches, responses, non-JSON bodies, and the headers and session each is sent with.
import fc from 'fast-check';
import {
  anyNumber,
  harmless,
  numberLiterals,
  Raw,
  rawJunk,
  serialize,
  taskId,
  TOOL_NAMES,
  trickyKey,
  VALID_FIELDS,
  withKeys,
} from './values.js';
import { INITIALIZE } from '../../helpers/raw-mcp.js';

const requestId = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, '', '1', '__proto__'),
  },
  { weight: 1, arbitrary: numberLiterals },
  { weight: 2, arbitrary: rawJunk },
);
const method = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      'tools/list',
      'tools/call',
      'ping',
      'initialize',
      'notifications/initialized',
      'notifications/cancelled',
      'notifications/progress',
      'resources/list',
      'prompts/list',
      'logging/setLevel',
      'completion/complete',
      'tasks/get',
      'tasks/list',
      'tasks/cancel',
      'tasks/result',
      'tasks/update',
      'server/discover',
      'subscriptions/listen',
      'no/such',
      '',
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: rawJunk },
);
/** The 2026-07-28 envelope: right most of the time, any of its members wrong or missing otherwise. */
const modernMeta = fc.record(
  {
    'io.modelcontextprotocol/protocolVersion': fc.oneof(
      { weight: 6, arbitrary: fc.constant('2026-07-28') },
      { weight: 1, arbitrary: fc.constantFrom('2025-11-25', '2099-01-01', 'v999.0.0', '') },
      { weight: 1, arbitrary: rawJunk },
    ),
    'io.modelcontextprotocol/clientCapabilities': fc.oneof(
      { weight: 3, arbitrary: fc.constant({}) },
      { weight: 3, arbitrary: fc.constant({ extensions: { 'io.modelcontextprotocol/tasks': {} } }) },
      { weight: 1, arbitrary: rawJunk },
    ),
    'io.modelcontextprotocol/clientInfo': fc.oneof(
      { weight: 3, arbitrary: fc.constant({ name: 'fuzz', version: '1' }) },
      { weight: 1, arbitrary: rawJunk },
    ),
    progressToken: fc.oneof({ weight: 5, arbitrary: fc.integer() }, { weight: 1, arbitrary: requestId }),
  },
  // Left out, they are the other _meta shapes below.
  { requiredKeys: ['io.modelcontextprotocol/protocolVersion', 'io.modelcontextprotocol/clientCapabilities'] },
);
const meta = fc.oneof(
  { weight: 3, arbitrary: modernMeta },
  fc.record({ progressToken: requestId }, { requiredKeys: [] }),
  fc.record({
    'io.modelcontextprotocol/related-task': fc.oneof(fc.record({ taskId: fc.oneof(fc.string(), rawJunk) }), rawJunk),
  }),
  fc
    .tuple(
      fc.dictionary(fc.string({ maxLength: 10 }), rawJunk, { maxKeys: 3 }),
      fc.array(fc.tuple(trickyKey, rawJunk), { maxLength: 2 }),
    )
    .map(([base, extra]) => withKeys(base, extra)),
  rawJunk,
);
const toolArguments = fc
  .constantFrom(...TOOL_NAMES)
  .chain((tool) =>
    fc.record(
      Object.fromEntries(
        Object.entries(VALID_FIELDS[tool]).map(([name, valid]) => [
          name,
          fc.oneof({ weight: 2, arbitrary: valid }, { weight: 1, arbitrary: rawJunk }),
        ]),
      ),
      { requiredKeys: [] },
    ),
  );
const callParams = fc.record(
  {
    name: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...TOOL_NAMES, 'launch', '') },
      { weight: 1, arbitrary: rawJunk },
    ),
    arguments: fc.oneof({ weight: 3, arbitrary: toolArguments }, { weight: 1, arbitrary: rawJunk }),
    _meta: meta,
  },
  { requiredKeys: [] },
);
const requestParams = fc.oneof(
  { weight: 3, arbitrary: callParams },
  {
    weight: 1,
    arbitrary: fc.record(
      { taskId: fc.oneof({ weight: 3, arbitrary: taskId }, { weight: 1, arbitrary: rawJunk }), _meta: meta },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.record({ _meta: meta }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.record({ requestId, reason: fc.oneof(fc.string(), rawJunk) }, { requiredKeys: [] }) },
  {
    weight: 1,
    arbitrary: fc.record({
      protocolVersion: fc.constantFrom('2025-06-18', '2024-11-05', 'x'),
      capabilities: fc.constant({}),
      clientInfo: fc.constant({ name: 'f', version: '1' }),
    }),
  },
  { weight: 1, arbitrary: rawJunk },
);
const jsonrpc = fc.oneof(
  { weight: 12, arbitrary: fc.constant('2.0') },
  { weight: 1, arbitrary: fc.constantFrom('1.0', '2', 2, null) },
  { weight: 1, arbitrary: rawJunk },
);
const errorCode = fc.oneof(fc.constantFrom(-32600, -32601, -32603, 0, 1.5), anyNumber);

/** Some member left out, one added: the strict schemas must be met or refused with a reason. */
function mangle<T extends Record<string, unknown>>(message: fc.Arbitrary<T>): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(
      message,
      fc.option(fc.constantFrom('jsonrpc', 'id', 'method', 'params', 'result', 'error'), { freq: 6 }),
      fc.option(
        fc.oneof(
          fc.tuple(fc.oneof(trickyKey, fc.constantFrom('extra', 'id')), rawJunk),
          fc.tuple(fc.constantFrom('result', 'error'), rawJunk),
        ),
        { freq: 6 },
      ),
    )
    .map(([body, drop, add]) => {
      const result: Record<string, unknown> = { ...body };
      if (drop !== null) delete result[drop];
      return add === null ? result : withKeys(result, [add]);
    });
}

const initialize = mangle(
  fc.record({
    jsonrpc,
    id: requestId,
    method: fc.constant('initialize'),
    params: fc.oneof(
      fc.constant(INITIALIZE.params),
      fc.record(
        {
          protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2024-11-05', '1999-01-01'), rawJunk),
          capabilities: fc.oneof(fc.constant({}), rawJunk),
          clientInfo: fc.oneof(fc.constant(INITIALIZE.params.clientInfo), rawJunk),
          _meta: meta,
        },
        { requiredKeys: [] },
      ),
      rawJunk,
    ),
  }),
);
const message: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: initialize },
  {
    weight: 6,
    arbitrary: mangle(
      fc.record(
        { jsonrpc, id: requestId, method, params: requestParams },
        { requiredKeys: ['jsonrpc', 'id', 'method'] },
      ),
    ),
  },
  {
    weight: 2,
    arbitrary: mangle(fc.record({ jsonrpc, method, params: requestParams }, { requiredKeys: ['jsonrpc', 'method'] })),
  },
  {
    weight: 1,
    arbitrary: mangle(
      fc.record({
        jsonrpc,
        id: requestId,
        result: fc.oneof(fc.record({ _meta: meta, value: rawJunk }, { requiredKeys: [] }), rawJunk),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: mangle(
      fc.record(
        {
          jsonrpc,
          id: requestId,
          error: fc.oneof(
            fc.record(
              { code: errorCode, message: fc.oneof(fc.string(), rawJunk), data: rawJunk },
              { requiredKeys: ['code', 'message'] },
            ),
            rawJunk,
          ),
        },
        { requiredKeys: ['jsonrpc', 'error'] },
      ),
    ),
  },
  { weight: 1, arbitrary: rawJunk },
);

/** `run` only ever runs `true` (or is refused first), without env, and no call waits long. */
function harmlessMessage(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Raw) return value;
  const params = (value as { params?: unknown }).params;
  if (params === null || typeof params !== 'object' || params instanceof Raw) return value;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (
    typeof name !== 'string' ||
    args === null ||
    typeof args !== 'object' ||
    Array.isArray(args) ||
    args instanceof Raw
  )
    return value;
  const safe = harmless(name, args as Record<string, unknown>);
  if (name === 'run') delete safe.env;
  if (typeof safe.wait_seconds === 'number') safe.wait_seconds = Math.min(safe.wait_seconds, 0.2);
  return value;
}

const batch = fc.oneof(
  { weight: 4, arbitrary: fc.array(message, { minLength: 0, maxLength: 5 }) },
  { weight: 1, arbitrary: fc.array(message, { minLength: 90, maxLength: 120 }) },
  { weight: 1, arbitrary: fc.constant([]) },
);
const nonJson = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 50 }).filter((text) => {
    try {
      JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  }),
  fc.constantFrom(
    '',
    '{',
    '[1,',
    '{"jsonrpc":"2.0"',
    '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}',
    '{"a":1}{"b":2}',
    'NaN',
    'undefined',
    "{'a':1}",
    '['.repeat(10),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
);
const body: fc.Arbitrary<string | Buffer> = fc.oneof(
  { weight: 6, arbitrary: message.map((value) => serialize(harmlessMessage(value))) },
  { weight: 3, arbitrary: batch.map((values) => serialize(values.map(harmlessMessage))) },
  { weight: 1, arbitrary: nonJson },
);

/** An initialize sent without a session: it opens one only if it is answered with its id. */
const initializeBody = fc.oneof(
  { weight: 3, arbitrary: initialize.map((value) => serialize(value)) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.oneof(initialize, message), { minLength: 1, maxLength: 3 })
      .map((values) => serialize(values.map(harmlessMessage))),
  },
);

/** Printable header text: what an HTTP client can send at all. */
const headerText = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  maxLength: 60,
});
type SessionChoice = 'valid' | 'none' | 'unknown' | 'closed' | 'garbage';
const headerSet = fc.record({
  contentType: fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'application/json; charset=utf-8',
        'Application/JSON',
        ' application/json ',
        'application/json;',
        'text/plain',
        'application/jsonx',
        'application/json-seq',
        'multipart/form-data',
        '',
        undefined,
      ),
    },
    { weight: 1, arbitrary: headerText },
  ),
  accept: fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json, text/event-stream') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'application/json',
        'text/event-stream',
        '*/*',
        'text/event-stream, application/json',
        '',
        undefined,
      ),
    },
    { weight: 1, arbitrary: headerText },
  ),
  session: fc.oneof(
    { weight: 8, arbitrary: fc.constant<SessionChoice>('valid') },
    { weight: 1, arbitrary: fc.constant<SessionChoice>('none') },
    { weight: 1, arbitrary: fc.constantFrom<SessionChoice>('unknown', 'closed', 'garbage') },
  ),
  garbageSession: headerText,
  protocolVersion: fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom('2025-06-18', undefined) },
    { weight: 4, arbitrary: fc.constant('2026-07-28') },
    { weight: 1, arbitrary: fc.constantFrom('2025-03-26', '2024-11-05', '1999-01-01', '2099-01-01', 'v999.0.0', '') },
    { weight: 1, arbitrary: headerText },
  ),
  /** 2026-07-28's Mcp-Method and Mcp-Name: mirrored from the body (plainly or in base64), left out, or anything. */
  mcpMethod: fc.oneof(
    { weight: 6, arbitrary: fc.constant<Mirror>('mirror') },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: headerText },
  ),
  mcpName: fc.oneof(
    { weight: 5, arbitrary: fc.constant<Mirror>('mirror') },
    { weight: 1, arbitrary: fc.constant<Mirror>('base64') },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: headerText },
    { weight: 1, arbitrary: fc.constantFrom('=?base64?!!?=', '=?base64?cnVu?=') },
  ),
});
type Mirror = 'mirror' | 'base64';
const MAX_MIRRORED_CHARS = 4096;

/** The method and the name (params.name or params.taskId) of a single message in `payload`, where printable. */
function mirroredValues(payload: string | Buffer): { method?: string; name?: string } {
  let message: any;
  try {
    message = JSON.parse(payload.toString());
  } catch {
    return {};
  }
  const printable = (value: unknown) => (typeof value === 'string' && /^[\x20-\x7e]*$/.test(value) ? value : undefined);
  const name = message?.params?.name ?? message?.params?.taskId;
  return { method: printable(message?.method), name: typeof name === 'string' ? name : undefined };
}

/** The Mcp-Method and Mcp-Name headers `choice` asks for. */
export function modernHeaders(
  choice: { mcpMethod?: string; mcpName?: string },
  payload: string | Buffer,
): Record<string, string> {
  const { method: bodyMethod, name: bodyName } = mirroredValues(payload);
  // node:http answers headers over 16 KiB with a bare 431 before the daemon sees them: a long method or name is not mirrored.
  const name = bodyName !== undefined && bodyName.length <= MAX_MIRRORED_CHARS ? bodyName : undefined;
  const headers: Record<string, string> = {};
  const method =
    choice.mcpMethod === 'mirror'
      ? bodyMethod !== undefined && bodyMethod.length <= MAX_MIRRORED_CHARS
        ? bodyMethod
        : undefined
      : choice.mcpMethod;
  if (method !== undefined) headers['mcp-method'] = method;
  if (choice.mcpName === 'base64' && name !== undefined)
    headers['mcp-name'] = `=?base64?${Buffer.from(name).toString('base64')}?=`;
  else if (choice.mcpName === 'mirror' && name !== undefined && /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(name))
    headers['mcp-name'] = name;
  else if (choice.mcpName !== undefined && choice.mcpName !== 'mirror' && choice.mcpName !== 'base64')
    headers['mcp-name'] = choice.mcpName;
  return headers;
}

/** The headers a 2026-07-28 client sends, half the time in the modern cases (the other half: any). */
const MODERN_HEADERS = {
  protocolVersion: '2026-07-28',
  accept: 'application/json, text/event-stream',
  contentType: 'application/json',
  mcpMethod: 'mirror' as Mirror,
  mcpName: 'mirror' as Mirror,
};
/** A request of 2026-07-28 that is right more often than not: its methods, its _meta, its header. */
const modernRequest = fc.record({
  jsonrpc: fc.oneof({ weight: 10, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: jsonrpc }),
  id: fc.oneof({ weight: 6, arbitrary: fc.integer() }, { weight: 1, arbitrary: requestId }),
  method: fc.oneof(
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        'server/discover',
        'tools/list',
        'tools/call',
        'tools/call',
        'tasks/get',
        'tasks/cancel',
        'tasks/update',
      ),
    },
    { weight: 1, arbitrary: method },
  ),
  params: fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record(
        { name: callParams.map((call) => call.name), arguments: toolArguments, taskId, _meta: modernMeta },
        { requiredKeys: ['_meta'] },
      ),
    },
    { weight: 1, arbitrary: requestParams },
  ),
});
const modernBody = fc
  .oneof({ weight: 3, arbitrary: modernRequest }, { weight: 1, arbitrary: mangle(modernRequest) })
  .map((value) => serialize(harmlessMessage(value)));
/** A body and the headers and session it is sent with. */
export const rawCase = fc.oneof(
  { weight: 9, arbitrary: fc.tuple(body, headerSet) },
  {
    weight: 1,
    arbitrary: fc.tuple(
      initializeBody,
      headerSet.map((choice) => ({ ...choice, session: 'none' })),
    ),
  },
  {
    weight: 4,
    arbitrary: fc.tuple(
      modernBody,
      fc.tuple(headerSet, fc.boolean()).map(([choice, keep]) => (keep ? choice : { ...choice, ...MODERN_HEADERS })),
    ),
  },
);
