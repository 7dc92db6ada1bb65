// Property-based fuzz (fast-check) of what a client can send: every tool's arguments through the
// SDK's own client, and raw JSON-RPC envelopes over HTTP (ids, methods, params, _meta, batches,
// responses, non-JSON bodies, headers, sizes, sessions), of both eras: 2025's sessions and
// 2026-07-28's per-request _meta with its MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. Whatever the input, every request is
// answered in time with a known tool error or the right JSON-RPC error, never an internal one, and
// the daemon stays up, quiet in its error log, with no task or session left behind.
//
// Runs: small by default (CI); HIVE_FUZZ_RUNS=N runs every property N times; HIVE_FUZZ_SEED=S
// replays the seed every run prints first; HIVE_FUZZ_NO_SHRINK=1 stops at the first failure.
import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import { request } from 'undici';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';

const FULL_RUNS = Number(process.env.HIVE_FUZZ_RUNS ?? '') || 0;
/** Every run has a seed, printed first, so that any failure replays with HIVE_FUZZ_SEED. */
const SEED = process.env.HIVE_FUZZ_SEED === undefined ? randomInt(2 ** 31) : Number(process.env.HIVE_FUZZ_SEED);
console.log(`fuzz seed ${SEED} (HIVE_FUZZ_SEED=${SEED} replays this run)`);
const params = (defaultRuns: number): fc.Parameters<any> => ({
  numRuns: FULL_RUNS > 0 ? FULL_RUNS : defaultRuns,
  includeErrorInReport: true,
  // Shrinking replays against the live daemon; HIVE_FUZZ_NO_SHRINK=1 reports the first failure as found.
  // CI-size runs report a failure at once (with its seed) instead of shrinking it against the live
  // daemon past the test's timeout.
  ...(process.env.HIVE_FUZZ_NO_SHRINK || FULL_RUNS === 0 ? { endOnFailure: true } : {}),
  seed: SEED,
});
/** Per-property test timeout: generous for full runs, tight for CI. */
const TEST_TIMEOUT_MS = FULL_RUNS > 0 ? 24 * 3600_000 : 120_000;

/** A request that gets no HTTP answer in this time holds the connection: a failure. */
const POST_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** A tool error is a sentence or a few; this bounds what any input can make the daemon echo. */
const MAX_ERROR_TEXT = 16 * 1024;

/**
 * Defects the fuzz found that are still open: their triggers are kept out of the generators (so
 * the properties guard everything else in CI) and each has a `todo` test below that reproduces it.
 * Delete an entry once its fix is in, and the fuzz covers that input again; HIVE_FUZZ_ALL=1 covers
 * every input now (and fails while any of these is open). The four it found first (an id or
 * progressToken past 2^53, an unbounded echo of unknown field names, a deeply nested response from
 * the client, params a known method refuses answered -32603) are fixed, and so are the two it found
 * at full size next (a cwd the OS refuses echoed whole, an initialize notification opening a
 * session): none is open.
 */
type Defect = 'unsafe-integer-id' | 'unbounded-unknown-field-echo' | 'unbounded-cwd-echo' | 'deep-response-stack-overflow' | 'invalid-params-internal-error' | 'initialize-notification-session';
const OPEN_DEFECTS = new Set<Defect>(process.env.HIVE_FUZZ_ALL ? [] : []);

/** The SDK's answer to params its request schema refuses (open defect): -32603 with zod's issues as JSON. */
function isZodIssueDump(error: { code?: unknown; message?: unknown }): boolean {
  if (!OPEN_DEFECTS.has('invalid-params-internal-error') || error.code !== -32603 || typeof error.message !== 'string') return false;
  try {
    const issues = JSON.parse(error.message) as Array<{ code?: unknown; path?: unknown }>;
    return Array.isArray(issues) && issues.length > 0 && issues.every((issue) => typeof issue.code === 'string' && Array.isArray(issue.path));
  } catch {
    return false;
  }
}

const KNOWN_TOOL_ERRORS = new Set([
  'ERR_INVALID_INPUT', 'ERR_UNKNOWN_TASK', 'ERR_NAME_BUSY', 'ERR_PORT_BUSY', 'ERR_QUEUE_FULL', 'ERR_STATE_DIR_FULL',
  'ERR_INPUT_NOT_INTERACTIVE', 'ERR_INPUT_PENDING', 'ERR_INPUT_ENDED', 'ERR_INPUT_STDIN_CLOSED', 'ERR_INPUT_NO_ANSWER', 'ERR_INPUT_WRITE_FAILED',
  'ERR_SANDBOX_NOT_ALLOWED', 'ERR_SANDBOX_UNAVAILABLE',
]);
const JSON_RPC_ERRORS = new Set([-32700, -32600, -32601, -32602, -32000, -32001, -32020, -32021, -32022]);
const HTTP_STATUSES = new Set([200, 202, 400, 404, 405, 406, 413, 415]);
const TOOL_NAMES = ['run', 'status', 'output', 'kill', 'list', 'input'] as const;
const TASK_STATES = ['pending', 'running', 'done', 'timed_out', 'killed', 'interrupted'];
const DAEMON_ARGS = ['--max-running', '1', '--max-pending', '5'];

// ---------------------------------------------------------------------------------------------
// Values of every kind

/** Text put into a raw body as is: number literals JSON.stringify cannot write, nesting it cannot reach. */
class Raw {
  constructor(readonly text: string) {}
}

const loneSurrogates = fc.constantFrom('\ud800', '\udfff', 'a\udc00b', '\ud83d', '\ude00x');
const oddStrings = fc.constantFrom('', ' ', '\0', 'a\0b', 'true', 'null', '0', '__proto__', 'constructor', 'toString', '../../etc/passwd', '%s%n%x', '\u202e', '\r\n', '\ufeff', '😀', 'SIGKILL', 'task-1', 'fuzz-a');
const longString = fc.integer({ min: 1, max: 300_000 }).map((n) => 'x'.repeat(n));
const anyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: oddStrings },
  { weight: 2, arbitrary: loneSurrogates },
  { weight: 1, arbitrary: fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}\0${b}`) },
  { weight: 1, arbitrary: longString },
);

/** An integer-valued double beyond 2^53: JavaScript calls it an integer, the SDK's zod does not. */
const isUnsafeInteger = (value: number) => Number.isInteger(value) && !Number.isSafeInteger(value);
const anyNumber = fc
  .oneof(
    fc.double(),
    fc.integer(),
    fc.constantFrom(1e308, -1e308, 5e-324, -0, 0, 1, -1, 0.5, 1.5, 30, 30.000001, 65535, 65536, 1000, 1001, 4194304, 1e21, 2 ** 53 + 2, -(2 ** 53) - 2, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  )
  .filter((value) => !(OPEN_DEFECTS.has('unsafe-integer-id') && isUnsafeInteger(value)));

/** Nested `depth` levels deep, as a JS value (for the SDK's client, whose JSON.stringify recurses). */
function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}
const deepValue = fc.tuple(fc.integer({ min: 1, max: 2000 }), fc.constantFrom('array' as const, 'object' as const)).map(([depth, kind]) => nested(depth, kind));

/** Own keys the prototype chain also has: JSON.parse makes them plain members, and so does this. */
function withKeys(base: Record<string, unknown>, entries: Array<[string, unknown]>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of entries) Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
  return result;
}
const trickyKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '', ' ', '\0', '\ud800', 'command ', 'ID', 'wait-seconds', '$ref');
const unknownKey = OPEN_DEFECTS.has('unbounded-unknown-field-echo')
  ? fc.oneof(trickyKey, fc.string({ unit: 'binary', maxLength: 30 }))
  : fc.oneof(trickyKey, fc.string({ unit: 'binary', maxLength: 30 }), longString);
const protoObject = fc
  .array(fc.tuple(trickyKey, fc.oneof(fc.constant({ polluted: true }), fc.jsonValue({ maxDepth: 2 }))), { maxLength: 3 })
  .map((entries) => withKeys({}, entries));

/** Any JSON value a client could send, of the wrong type for most fields. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: anyString },
  { weight: 3, arbitrary: anyNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).filter((value) => !containsUnsafeInteger(value)) },
  { weight: 1, arbitrary: fc.array(anyString, { maxLength: 5 }) },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: protoObject },
);

function containsUnsafeInteger(value: unknown): boolean {
  if (!OPEN_DEFECTS.has('unsafe-integer-id')) return false;
  if (typeof value === 'number') return isUnsafeInteger(value);
  if (value === null || typeof value !== 'object') return false;
  return Object.values(value).some(containsUnsafeInteger);
}

// ---------------------------------------------------------------------------------------------
// Tool arguments: each field valid most of the time, anything else otherwise, unknown fields beside

const taskId = fc.oneof(fc.constantFrom('task-1', 'task-2', 'task-3', 'fuzz-a', 'fuzz-b'), fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/));
const smallWait = fc.double({ min: 0, max: 0.3, noNaN: true });
const pattern = fc.oneof(fc.constantFrom('ready', 'listening on', '.*', '^$', '(a)\\1', '(?=x)', '(?<=y)z', '[', '\\', 'a{2,1}', '\\p{L}+', 'x'.repeat(1025)), fc.string({ unit: 'binary', maxLength: 30 }));
const port = fc.integer({ min: 1, max: 65535 });

const VALID_FIELDS: Record<(typeof TOOL_NAMES)[number], Record<string, fc.Arbitrary<unknown>>> = {
  run: {
    command: fc.constant('true'),
    name: taskId,
    wait_seconds: smallWait,
    timeout_seconds: fc.double({ min: 0.001, max: 31_536_000, noNaN: true }),
    cwd: fc.constantFrom('/', '/tmp', '.', '..', '/proc', '/proc/self', '/dev/null', '/etc/passwd', '/no/such/dir', 'relative/dir', '/root', '//', '/tmp/../tmp'),
    env: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_]{0,12}$/).map((name) => `FUZZ_${name}`), fc.string({ unit: 'binary', maxLength: 50 }), { maxKeys: 4 }),
    stdin: fc.oneof(fc.string({ unit: 'binary', maxLength: 100 }), fc.constantFrom('', 'y\n', 'x'.repeat(1024 * 1024 + 1))),
    pty: fc.boolean(),
    cols: fc.integer({ min: 1, max: 1000 }),
    rows: fc.integer({ min: 1, max: 1000 }),
    interactive: fc.boolean(),
    memory_limit_mb: fc.integer({ min: 1, max: 4 * 1024 * 1024 }),
    max_processes: fc.integer({ min: 1, max: 100_000 }),
    cpu_limit: fc.double({ min: 0.01, max: 1024, noNaN: true }),
    sandbox: fc.record(
      { write: fc.array(fc.oneof(fc.constantFrom('/tmp', '/', '/no/such/dir', 'relative', '/tmp/../tmp', '/dev/null', ''), junk), { maxLength: 3 }), network: fc.oneof(fc.boolean(), junk) },
      { requiredKeys: [] },
    ),
    wait_for: pattern,
    wait_for_port: port,
    exclusive_port: port,
  },
  status: {
    id: taskId,
    ids: fc.array(taskId, { minLength: 1, maxLength: 101 }),
    wait: fc.constantFrom('any', 'all'),
    wait_seconds: smallWait,
    wait_for: pattern,
    wait_for_port: port,
    tail_bytes: fc.integer({ min: 0, max: 65536 }),
    peek: fc.boolean(),
  },
  output: {
    id: taskId,
    stream: fc.constantFrom('stdout', 'stderr', 'both', 'all'),
    since: fc.oneof(fc.constantFrom('', 'bzEgMDAwMDAwMDAtMDAwMCAwIDEgMCAx', 'bzEgeCAtMSAwIDAgMA'), fc.base64String({ maxLength: 80 })),
    wait_seconds: smallWait,
    grep: pattern,
    context: fc.integer({ min: 0, max: 21 }),
    head: fc.integer({ min: 0, max: 100_001 }),
    tail: fc.integer({ min: 0, max: 100_001 }),
    max_bytes: fc.integer({ min: 0, max: 1024 * 1024 + 1 }),
    raw: fc.boolean(),
    screen: fc.boolean(),
  },
  kill: {
    id: taskId,
    force: fc.boolean(),
    signal: fc.constantFrom('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGKILL', 'SIGSTOP', 'sigterm', '9'),
  },
  list: {
    state: fc.constantFrom(...TASK_STATES, 'finished', 'RUNNING'),
    limit: fc.integer({ min: 1, max: 1000 }),
    ports: fc.boolean(),
  },
  input: {
    id: taskId,
    text: fc.oneof(fc.string({ unit: 'binary', maxLength: 100 }), fc.constantFrom('', 'y\n', 'x'.repeat(1024 * 1024 + 1))),
    eof: fc.boolean(),
  },
};

/** Keeps a call harmless and quick: `true` or a command refused before it runs, short waits. */
function harmless(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  if (tool === 'run' && typeof args.command === 'string' && args.command.length > 0 && !args.command.includes('\0') && Buffer.byteLength(args.command) <= 256 * 1024) {
    args.command = 'true';
  }
  if ((tool === 'run' || tool === 'status' || tool === 'output') && typeof args.wait_seconds === 'number' && args.wait_seconds > 0.5) args.wait_seconds = 0.5;
  if (tool === 'run' && args.env !== null && typeof args.env === 'object' && !Array.isArray(args.env)) {
    // bash reads BASH_ENV and friends at start: a valid name that is not FUZZ_* is dropped.
    const env = args.env as Record<string, unknown>;
    for (const name of Object.keys(env)) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !name.startsWith('FUZZ_')) delete env[name];
  }
  return args;
}

const toolCall = fc.constantFrom(...TOOL_NAMES).chain((tool) => {
  const fields = Object.fromEntries(
    Object.entries(VALID_FIELDS[tool]).map(([name, valid]) => [name, fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: junk })]),
  );
  return fc
    .tuple(fc.record(fields, { requiredKeys: [] }), fc.array(fc.tuple(unknownKey, junk), { maxLength: 3 }), fc.double({ min: 0, max: 1, noNaN: true }))
    .map(([args, extra, p]) => ({ tool, args: harmless(tool, p < 0.7 ? withKeys(args, []) : withKeys(args, extra)) }));
});

/** `limit` ms for `promise`, else a failure naming what hung. */
async function within<T>(promise: Promise<T>, limit: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${limit} ms: ${what}`)), limit);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function describeArgs(value: unknown): string {
  if (typeof value === 'string') return value.length > 300 ? `${JSON.stringify(value.slice(0, 300))}... (${value.length} chars)` : JSON.stringify(value);
  try {
    const text = JSON.stringify(value);
    return text.length > 300 ? `${text.slice(0, 300)}... (${text.length} chars)` : text;
  } catch (error) {
    return `(unprintable: ${(error as Error).message})`;
  }
}

/** A tool error the daemon means: a known code, a bounded message, nothing internal. */
function assertToolError(structured: any, text: string, what: string): void {
  const code = structured?.error?.code;
  assert.ok(KNOWN_TOOL_ERRORS.has(code), `unknown or internal code ${code} for ${what}: ${text.slice(0, 500)}`);
  assert.equal(structured.error.message, text, what);
  assert.ok(text.length <= MAX_ERROR_TEXT, `an error of ${text.length} chars for ${what}`);
  assert.doesNotMatch(text, /internal error|Maximum call stack/i, what);
}

// ---------------------------------------------------------------------------------------------
// Checks after each property

/** Error (50) and fatal (60) lines of the daemon's log; none is expected from any input. */
function errorLines(daemon: TestDaemon): string[] {
  return daemon.stderr().split('\n').filter((line) => /"level":(50|60)\b/.test(line));
}

/** Kills whatever is still pending or running and waits until nothing is. */
async function killEverything(tools: ToolClient): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { tasks } = await tools.ok('list', { limit: 1000 });
    const live = (tasks as Array<{ id: string; state: string }>).filter((task) => task.state === 'pending' || task.state === 'running');
    if (live.length === 0) return;
    assert.ok(Date.now() < deadline, `tasks left running: ${live.map((task) => `${task.id} ${task.state}`).join(', ')}`);
    for (const task of live) await tools.call('kill', { id: task.id, force: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function assertHealthy(t: TestContext, daemon: TestDaemon, tools: ToolClient): Promise<void> {
  assert.equal(daemon.child.exitCode, null, `the daemon exited:\n${daemon.stderr()}`);
  assert.equal(daemon.child.signalCode, null, `the daemon was killed:\n${daemon.stderr()}`);
  const listed = await within(tools.client.listTools(), POST_TIMEOUT_MS, 'tools/list after the fuzz');
  assert.deepEqual(listed.tools.map((tool) => tool.name), [...TOOL_NAMES]);
  await killEverything(tools);
  assert.deepEqual(errorLines(daemon), [], 'the daemon logged an error');
  t.diagnostic(`daemon healthy; ${daemon.stderr().split('\n').filter(Boolean).length} log lines (warn and above)`);
}

// ---------------------------------------------------------------------------------------------
// 1. Tool arguments through the SDK's client (which validates structured content against each
//    tool's output schema, error results included)

test('every tool call with arbitrary arguments returns in time: a result or a known tool error, never an internal one', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
  const tools = await connectClient(t, daemon.url);
  let calls = 0;
  let errors = 0;
  await fc.assert(
    fc.asyncProperty(toolCall, async ({ tool, args }) => {
      const what = `${tool} ${describeArgs(args)}`;
      calls++;
      // Throws on a JSON-RPC error, on a time-out and on structured content the schema refuses.
      const result = await within(tools.call(tool, args), 30_000, what);
      if (result.isError) {
        errors++;
        assertToolError(result.structured, result.text, what);
      } else {
        assert.ok(result.structured !== null && typeof result.structured === 'object', what);
        assert.ok(result.structured.error === undefined || result.structured.error === null || typeof result.structured.error === 'string', what);
      }
    }),
    params(200),
  );
  t.diagnostic(`${calls} calls, ${errors} tool errors`);
  await assertHealthy(t, daemon, tools);
});

// ---------------------------------------------------------------------------------------------
// 2. Raw JSON-RPC envelopes over HTTP

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } };

/**
 * JSON text of a value that may hold Raw nodes (written verbatim). Iterative: the values are nested
 * up to thousands of levels deep, past what a recursive writer's stack holds on every Node version
 * (Node 24 overflowed on one).
 */
function serialize(value: unknown): string {
  const parts: string[] = [];
  const pending: unknown[] = [value];
  const push = (items: unknown[]) => {
    for (let i = items.length - 1; i >= 0; i--) pending.push(items[i]);
  };
  while (pending.length > 0) {
    const item = pending.pop();
    if (item instanceof Raw) parts.push(item.text);
    else if (Array.isArray(item)) push([new Raw('['), ...item.flatMap((element, i) => (i === 0 ? [element] : [new Raw(','), element])), new Raw(']')]);
    else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item).filter(([, member]) => member !== undefined);
      push([new Raw('{'), ...entries.flatMap(([key, member], i) => [new Raw(`${i === 0 ? '' : ','}${JSON.stringify(key)}:`), member]), new Raw('}')]);
    } else parts.push(JSON.stringify(item) ?? 'null');
  }
  return parts.join('');
}

const deepRaw = fc
  .tuple(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) => new Raw(kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`));
const numberLiterals = fc.constantFrom('-0', '1e999', '-1e999', '1E2', '0.0', '1.0', '-0.0', '5e-324', '1e-400', ...(OPEN_DEFECTS.has('unsafe-integer-id') ? [] : ['1e21', '9007199254740993', '123456789012345678901234567890'])).map((text) => new Raw(text));
const rawJunk: fc.Arbitrary<unknown> = fc.oneof({ weight: 6, arbitrary: junk }, { weight: 1, arbitrary: deepRaw }, { weight: 1, arbitrary: numberLiterals });

/** What a client's response to the server (result, error) carries. */
const responseJunk = OPEN_DEFECTS.has('deep-response-stack-overflow')
  ? fc.oneof(anyString, anyNumber, fc.boolean(), fc.constant(null), fc.jsonValue({ maxDepth: 3 }).filter((value) => !containsUnsafeInteger(value)), numberLiterals)
  : rawJunk;

const requestId = fc.oneof(
  { weight: 4, arbitrary: fc.integer() },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.constantFrom(0, -1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, '', '1', '__proto__') },
  { weight: 1, arbitrary: numberLiterals },
  { weight: 2, arbitrary: rawJunk },
);
const method = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('tools/list', 'tools/call', 'ping', 'initialize', 'notifications/initialized', 'notifications/cancelled', 'notifications/progress', 'resources/list', 'prompts/list', 'logging/setLevel', 'completion/complete', 'tasks/get', 'tasks/list', 'tasks/cancel', 'tasks/result', 'tasks/update', 'server/discover', 'subscriptions/listen', 'no/such', '', '__proto__', 'constructor', 'toString', 'hasOwnProperty') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: rawJunk },
);
/** The 2026-07-28 envelope: right most of the time, any of its members wrong or missing otherwise. */
const modernMeta = fc.record(
  {
    'io.modelcontextprotocol/protocolVersion': fc.oneof({ weight: 6, arbitrary: fc.constant('2026-07-28') }, { weight: 1, arbitrary: fc.constantFrom('2025-11-25', '2099-01-01', 'v999.0.0', '') }, { weight: 1, arbitrary: rawJunk }),
    'io.modelcontextprotocol/clientCapabilities': fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 3, arbitrary: fc.constant({ extensions: { 'io.modelcontextprotocol/tasks': {} } }) }, { weight: 1, arbitrary: rawJunk }),
    'io.modelcontextprotocol/clientInfo': fc.oneof({ weight: 3, arbitrary: fc.constant({ name: 'fuzz', version: '1' }) }, { weight: 1, arbitrary: rawJunk }),
    progressToken: fc.oneof({ weight: 5, arbitrary: fc.integer() }, { weight: 1, arbitrary: requestId }),
  },
  // Left out, they are the other _meta shapes below.
  { requiredKeys: ['io.modelcontextprotocol/protocolVersion', 'io.modelcontextprotocol/clientCapabilities'] },
);
const meta = fc.oneof(
  { weight: 3, arbitrary: modernMeta },
  fc.record({ progressToken: requestId }, { requiredKeys: [] }),
  fc.record({ 'io.modelcontextprotocol/related-task': fc.oneof(fc.record({ taskId: fc.oneof(fc.string(), rawJunk) }), rawJunk) }),
  fc.tuple(fc.dictionary(fc.string({ maxLength: 10 }), rawJunk, { maxKeys: 3 }), fc.array(fc.tuple(trickyKey, rawJunk), { maxLength: 2 })).map(([base, extra]) => withKeys(base, extra)),
  rawJunk,
);
const responseMeta = OPEN_DEFECTS.has('deep-response-stack-overflow') ? fc.oneof(fc.record({ progressToken: fc.oneof(fc.integer(), fc.string()) }), responseJunk) : meta;
const toolArguments = fc.constantFrom(...TOOL_NAMES).chain((tool) =>
  fc.record(Object.fromEntries(Object.entries(VALID_FIELDS[tool]).map(([name, valid]) => [name, fc.oneof({ weight: 2, arbitrary: valid }, { weight: 1, arbitrary: rawJunk })])), { requiredKeys: [] }),
);
const callParams = fc.record(
  {
    name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...TOOL_NAMES, 'launch', '') }, { weight: 1, arbitrary: rawJunk }),
    arguments: fc.oneof({ weight: 3, arbitrary: toolArguments }, { weight: 1, arbitrary: rawJunk }),
    _meta: meta,
  },
  { requiredKeys: [] },
);
const requestParams = fc.oneof(
  { weight: 3, arbitrary: callParams },
  { weight: 1, arbitrary: fc.record({ taskId: fc.oneof({ weight: 3, arbitrary: taskId }, { weight: 1, arbitrary: rawJunk }), _meta: meta }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.record({ _meta: meta }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.record({ requestId, reason: fc.oneof(fc.string(), rawJunk) }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: fc.record({ protocolVersion: fc.constantFrom('2025-06-18', '2024-11-05', 'x'), capabilities: fc.constant({}), clientInfo: fc.constant({ name: 'f', version: '1' }) }) },
  { weight: 1, arbitrary: rawJunk },
);
const jsonrpc = fc.oneof({ weight: 12, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: fc.constantFrom('1.0', '2', 2, null) }, { weight: 1, arbitrary: rawJunk });
const errorCode = fc.oneof(fc.constantFrom(-32600, -32601, -32603, 0, 1.5), anyNumber);

/** Some member left out, one added: the strict schemas must be met or refused with a reason. */
function mangle<T extends Record<string, unknown>>(message: fc.Arbitrary<T>): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(message, fc.option(fc.constantFrom('jsonrpc', 'id', 'method', 'params', 'result', 'error'), { freq: 6 }), fc.option(fc.oneof(fc.tuple(fc.oneof(trickyKey, fc.constantFrom('extra', 'id')), rawJunk), fc.tuple(fc.constantFrom('result', 'error'), responseJunk)), { freq: 6 }))
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
    params: fc.oneof(fc.constant(INITIALIZE.params), fc.record({ protocolVersion: fc.oneof(fc.constantFrom('2025-06-18', '2024-11-05', '1999-01-01'), rawJunk), capabilities: fc.oneof(fc.constant({}), rawJunk), clientInfo: fc.oneof(fc.constant(INITIALIZE.params.clientInfo), rawJunk), _meta: meta }, { requiredKeys: [] }), rawJunk),
  }),
);
const message: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: initialize },
  { weight: 6, arbitrary: mangle(fc.record({ jsonrpc, id: requestId, method, params: requestParams }, { requiredKeys: ['jsonrpc', 'id', 'method'] })) },
  { weight: 2, arbitrary: mangle(fc.record({ jsonrpc, method, params: requestParams }, { requiredKeys: ['jsonrpc', 'method'] })) },
  { weight: 1, arbitrary: mangle(fc.record({ jsonrpc, id: requestId, result: fc.oneof(fc.record({ _meta: responseMeta, value: responseJunk }, { requiredKeys: [] }), responseJunk) })) },
  { weight: 1, arbitrary: mangle(fc.record({ jsonrpc, id: requestId, error: fc.oneof(fc.record({ code: errorCode, message: fc.oneof(fc.string(), responseJunk), data: responseJunk }, { requiredKeys: ['code', 'message'] }), responseJunk) }, { requiredKeys: ['jsonrpc', 'error'] })) },
  { weight: 1, arbitrary: rawJunk },
);

/** `run` only ever runs `true` (or is refused first), without env, and no call waits long. */
function harmlessMessage(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof Raw) return value;
  const params = (value as { params?: unknown }).params;
  if (params === null || typeof params !== 'object' || params instanceof Raw) return value;
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || args === null || typeof args !== 'object' || Array.isArray(args) || args instanceof Raw) return value;
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
  fc.string({ unit: 'binary', maxLength: 50 }).filter((text) => { try { JSON.parse(text); return false; } catch { return true; } }),
  fc.constantFrom('', '{', '[1,', '{"jsonrpc":"2.0"', '\ufeff{"jsonrpc":"2.0","id":1,"method":"ping"}', '{"a":1}{"b":2}', 'NaN', 'undefined', "{'a':1}", '[' .repeat(10)),
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
  { weight: 1, arbitrary: fc.array(fc.oneof(initialize, message), { minLength: 1, maxLength: 3 }).map((values) => serialize(values.map(harmlessMessage))) },
);

/** Printable header text: what an HTTP client can send at all. */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 60 });
type SessionChoice = 'valid' | 'none' | 'unknown' | 'closed' | 'garbage';
const headerSet = fc.record({
  contentType: fc.oneof({ weight: 8, arbitrary: fc.constant('application/json') }, { weight: 3, arbitrary: fc.constantFrom('application/json; charset=utf-8', 'Application/JSON', ' application/json ', 'application/json;', 'text/plain', 'application/jsonx', 'application/json-seq', 'multipart/form-data', '', undefined) }, { weight: 1, arbitrary: headerText }),
  accept: fc.oneof({ weight: 8, arbitrary: fc.constant('application/json, text/event-stream') }, { weight: 3, arbitrary: fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/event-stream, application/json', '', undefined) }, { weight: 1, arbitrary: headerText }),
  session: fc.oneof({ weight: 8, arbitrary: fc.constant<SessionChoice>('valid') }, { weight: 1, arbitrary: fc.constant<SessionChoice>('none') }, { weight: 1, arbitrary: fc.constantFrom<SessionChoice>('unknown', 'closed', 'garbage') }),
  garbageSession: headerText,
  protocolVersion: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('2025-06-18', undefined) }, { weight: 4, arbitrary: fc.constant('2026-07-28') }, { weight: 1, arbitrary: fc.constantFrom('2025-03-26', '2024-11-05', '1999-01-01', '2099-01-01', 'v999.0.0', '') }, { weight: 1, arbitrary: headerText }),
  /** 2026-07-28's Mcp-Method and Mcp-Name: mirrored from the body (plainly or in base64), left out, or anything. */
  mcpMethod: fc.oneof({ weight: 6, arbitrary: fc.constant<Mirror>('mirror') }, { weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: headerText }),
  mcpName: fc.oneof({ weight: 5, arbitrary: fc.constant<Mirror>('mirror') }, { weight: 1, arbitrary: fc.constant<Mirror>('base64') }, { weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: headerText }, { weight: 1, arbitrary: fc.constantFrom('=?base64?!!?=', '=?base64?cnVu?=') }),
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
function modernHeaders(choice: { mcpMethod?: string; mcpName?: string }, payload: string | Buffer): Record<string, string> {
  const { method: bodyMethod, name: bodyName } = mirroredValues(payload);
  // node:http answers headers over 16 KiB with a bare 431 before the daemon sees them: a long method or name is not mirrored.
  const name = bodyName !== undefined && bodyName.length <= MAX_MIRRORED_CHARS ? bodyName : undefined;
  const headers: Record<string, string> = {};
  const method = choice.mcpMethod === 'mirror' ? (bodyMethod !== undefined && bodyMethod.length <= MAX_MIRRORED_CHARS ? bodyMethod : undefined) : choice.mcpMethod;
  if (method !== undefined) headers['mcp-method'] = method;
  if (choice.mcpName === 'base64' && name !== undefined) headers['mcp-name'] = `=?base64?${Buffer.from(name).toString('base64')}?=`;
  else if (choice.mcpName === 'mirror' && name !== undefined && /^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(name)) headers['mcp-name'] = name;
  else if (choice.mcpName !== undefined && choice.mcpName !== 'mirror' && choice.mcpName !== 'base64') headers['mcp-name'] = choice.mcpName;
  return headers;
}

/** A request of 2026-07-28 that is right more often than not: its methods, its _meta, its header. */
/** The headers a 2026-07-28 client sends, half the time in the modern cases (the other half: any). */
const MODERN_HEADERS = { protocolVersion: '2026-07-28', accept: 'application/json, text/event-stream', contentType: 'application/json', mcpMethod: 'mirror' as Mirror, mcpName: 'mirror' as Mirror };
const modernRequest = fc.record({
  jsonrpc: fc.oneof({ weight: 10, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: jsonrpc }),
  id: fc.oneof({ weight: 6, arbitrary: fc.integer() }, { weight: 1, arbitrary: requestId }),
  method: fc.oneof({ weight: 6, arbitrary: fc.constantFrom('server/discover', 'tools/list', 'tools/call', 'tools/call', 'tasks/get', 'tasks/cancel', 'tasks/update') }, { weight: 1, arbitrary: method }),
  params: fc.oneof({ weight: 6, arbitrary: fc.record({ name: callParams.map((call) => call.name), arguments: toolArguments, taskId, _meta: modernMeta }, { requiredKeys: ['_meta'] }) }, { weight: 1, arbitrary: requestParams }),
});
const modernBody = fc.oneof({ weight: 3, arbitrary: modernRequest }, { weight: 1, arbitrary: mangle(modernRequest) }).map((value) => serialize(harmlessMessage(value)));
const rawCase = fc.oneof(
  { weight: 9, arbitrary: fc.tuple(body, headerSet) },
  { weight: 1, arbitrary: fc.tuple(initializeBody, headerSet.map((choice) => ({ ...choice, session: 'none' as SessionChoice }))) },
  { weight: 4, arbitrary: fc.tuple(modernBody, fc.tuple(headerSet, fc.boolean()).map(([choice, keep]) => (keep ? choice : { ...choice, ...MODERN_HEADERS }))) },
);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function rawPost(url: string, headers: Record<string, string>, payload: string | Buffer, timeout = POST_TIMEOUT_MS): Promise<Answer> {
  if (Buffer.byteLength(payload) > MAX_BODY_BYTES) return socketPost(url, headers, payload, timeout);
  const res = await request(url, { method: 'POST', headers, body: payload, headersTimeout: timeout, bodyTimeout: timeout });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/**
 * POST over a bare socket, reading the answer whatever happens to the rest of the body: an HTTP
 * client that meets an early answer while still writing may drop it (undici does, now and then).
 * The daemon answers once it has read the whole body, so that none is lost to a reset.
 */
function socketPost(url: string, headers: Record<string, string>, payload: string | Buffer, timeout: number): Promise<Answer> {
  const { hostname, port, host, pathname } = new URL(url);
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no answer in ${timeout} ms`)), timeout);
    let failure: Error | null = null;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') failure = error;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (failure !== null || split === -1 || status === null) return reject(failure ?? new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const answerHeaders: Record<string, string> = {};
      for (const line of text.slice(0, split).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        answerHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let rest = text.slice(split + 4);
      if (answerHeaders['transfer-encoding'] === 'chunked') {
        let decoded = '';
        for (let size = parseInt(rest, 16); size > 0; size = parseInt(rest, 16)) {
          const start = rest.indexOf('\r\n') + 2;
          decoded += Buffer.from(rest.slice(start)).subarray(0, size).toString('utf8');
          rest = Buffer.from(rest.slice(start)).subarray(size + 2).toString('utf8');
        }
        rest = decoded;
      }
      resolve({ status: Number(status[1]), headers: answerHeaders, text: rest });
    });
    const head = Object.entries({ ...headers, host, 'content-length': String(bytes.length), connection: 'close' }).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`POST ${pathname} HTTP/1.1\r\n${head}\r\n`);
    socket.end(bytes);
  });
}

async function healthSessions(daemon: TestDaemon): Promise<number> {
  const res = await request(new URL('/healthz', daemon.url), { headersTimeout: POST_TIMEOUT_MS, bodyTimeout: POST_TIMEOUT_MS });
  return ((await res.body.json()) as { sessions: number }).sessions;
}

async function openSession(url: string): Promise<string> {
  const answer = await rawPost(url, HEADERS, JSON.stringify(INITIALIZE));
  assert.equal(answer.status, 200, answer.text);
  return answer.headers['mcp-session-id'] as string;
}

async function deleteSession(url: string, session: string): Promise<void> {
  const res = await request(url, { method: 'DELETE', headers: { 'mcp-session-id': session }, headersTimeout: POST_TIMEOUT_MS, bodyTimeout: POST_TIMEOUT_MS });
  await res.body.text();
}

/** The id a response to `member` must carry, or undefined when none is owed. */
function owedId(member: unknown): string | number | undefined {
  if (member === null || typeof member !== 'object' || Array.isArray(member)) return undefined;
  const { method: name, id } = member as { method?: unknown; id?: unknown };
  if (typeof name !== 'string') return undefined;
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as string | number) : undefined;
}

const sameId = (a: unknown, b: unknown) => a === b || (typeof a === 'number' && typeof b === 'number' && a === b);

/** One JSON-RPC response as the daemon must write it. */
function checkResponse(response: any, where: string): void {
  assert.ok(response !== null && typeof response === 'object' && !Array.isArray(response), `${where}: not an object`);
  assert.equal(response.jsonrpc, '2.0', where);
  assert.ok('result' in response !== 'error' in response, `${where}: needs exactly one of result and error`);
  if ('error' in response && isZodIssueDump(response.error)) return;
  if ('error' in response) {
    assert.ok(JSON_RPC_ERRORS.has(response.error.code), `${where}: JSON-RPC error ${response.error.code} ${response.error.message}`);
    assert.equal(typeof response.error.message, 'string', where);
    assert.ok(response.error.message.length <= MAX_ERROR_TEXT, `${where}: an error message of ${response.error.message.length} chars`);
    assert.doesNotMatch(response.error.message, /internal error|Maximum call stack|Invalid tools\/call result/i, where);
  } else if (response.result?.isError === true) {
    const text = (response.result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
    assertToolError(response.result.structuredContent, text, where);
  }
}

function checkAnswer(answer: Answer, sent: string | Buffer, valid: boolean): void {
  const where = `POST ${describeArgs(Buffer.isBuffer(sent) ? `<bytes ${sent.toString('hex')}>` : sent)} -> ${answer.status} ${answer.text.slice(0, 300)}`;
  assert.ok(HTTP_STATUSES.has(answer.status), `${where}: unexpected status`);
  if (answer.status === 202) {
    assert.equal(answer.text, '', where);
    return;
  }
  assert.match(String(answer.headers['content-type']), /^application\/json/, where);
  let json: any;
  assert.doesNotThrow(() => (json = JSON.parse(answer.text)), `${where}: not JSON`);
  if (Array.isArray(json)) {
    assert.equal(answer.status, 200, where);
    json.forEach((response, i) => checkResponse(response, `${where} [${i}]`));
  } else {
    checkResponse(json, where);
    if (answer.status !== 200) assert.ok('error' in json, `${where}: a refusal without an error`);
  }
  // Every request of a message the session took is answered, each with its own id.
  if (!valid || Buffer.isBuffer(sent)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(sent);
  } catch {
    return;
  }
  const members = Array.isArray(parsed) ? parsed : [parsed];
  if (members.some((member) => (member as { method?: unknown } | null)?.method === 'notifications/cancelled')) return;
  const owed = members.map(owedId).filter((id) => id !== undefined);
  if (answer.status === 200) {
    const answers = Array.isArray(json) ? json : [json];
    for (const id of owed) assert.ok(answers.some((response: any) => sameId(response.id, id)), `${where}: no answer for id ${JSON.stringify(id)}`);
    assert.ok(answers.length <= members.length, `${where}: more answers than messages`);
  } else if (answer.status === 202) {
    assert.deepEqual(owed, [], `${where}: requests left unanswered`);
  }
}

test('every raw POST, whatever its envelope, headers or session, is answered in time with the right JSON-RPC answer, and no session is left behind', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
  const tools = await connectClient(t, daemon.url); // session 1, for the checks afterwards
  const session = await openSession(daemon.url); // session 2, the one the fuzz talks to
  const closed = await openSession(daemon.url);
  await deleteSession(daemon.url, closed);
  assert.equal(await healthSessions(daemon), 2);
  let posts = 0;
  let opened = 0;
  /** Answers only the 2026-07-28 era gives: a resultType, or one of its own error codes. */
  let modern = 0;
  const slowest: Array<[number, number, string | Buffer]> = [];
  await fc.assert(
    fc.asyncProperty(rawCase, async ([payload, choice]) => {
      const headers: Record<string, string> = {};
      if (choice.contentType !== undefined) headers['content-type'] = choice.contentType;
      if (choice.accept !== undefined) headers.accept = choice.accept;
      if (choice.protocolVersion !== undefined) headers['mcp-protocol-version'] = choice.protocolVersion;
      Object.assign(headers, modernHeaders(choice, payload));
      const sessionHeader = { valid: session, none: undefined, unknown: randomUUID(), closed, garbage: choice.garbageSession }[choice.session];
      if (sessionHeader !== undefined) headers['mcp-session-id'] = sessionHeader;
      posts++;
      const started = Date.now();
      const answer = await rawPost(daemon.url, headers, payload);
      const took = Date.now() - started;
      if (took > (slowest[0]?.[0] ?? 0)) slowest.unshift([took, answer.status, payload]);
      const announced = answer.headers['mcp-session-id'];
      if (typeof announced === 'string' && announced !== session) {
        // An initialize the fuzz sent without a session opened one, and said so: close it again.
        opened++;
        await deleteSession(daemon.url, announced);
      }
      const knownVersion = choice.protocolVersion === undefined || choice.protocolVersion === '2026-07-28' || SUPPORTED_PROTOCOL_VERSIONS.includes(choice.protocolVersion);
      const valid = choice.session === 'valid' && choice.contentType === 'application/json' && choice.accept === 'application/json, text/event-stream' && knownVersion;
      checkAnswer(answer, payload, valid);
      if (/"resultType":|"code":-3202[012]\b/.test(answer.text)) modern++;
      assert.equal(await healthSessions(daemon), 2, 'a session the client was never told of is left open');
      const listed = await rawPost(daemon.url, { ...HEADERS, 'mcp-session-id': session }, JSON.stringify({ jsonrpc: '2.0', id: `check-${posts}`, method: 'tools/list' }));
      assert.equal(listed.status, 200, `the session stopped serving after ${describeArgs(payload.toString())}: ${listed.text.slice(0, 300)}`);
      assert.equal(JSON.parse(listed.text).result.tools.length, TOOL_NAMES.length);
    }),
    params(300),
  );
  t.diagnostic(`${posts} POSTs (${modern} answered as 2026-07-28); ${opened} sessions opened by a fuzzed initialize, each closed again`);
  assert.ok(modern > 0, 'no POST reached the 2026-07-28 era');
  for (const [ms, status, sent] of slowest.slice(0, 3)) t.diagnostic(`slow: ${ms} ms, ${status} to ${describeArgs(sent.toString()).slice(0, 160)}`);
  await assertHealthy(t, daemon, tools);
});

test('bodies near the 4 MiB limit are answered: JSON up to it, 413 beyond, and the daemon serves on', { timeout: TEST_TIMEOUT_MS }, async (t) => {
  const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
  const tools = await connectClient(t, daemon.url);
  const session = await openSession(daemon.url);
  const headers = { ...HEADERS, 'mcp-session-id': session };
  const shapes = ['argument', 'meta', 'id', 'batch', 'broken'] as const;
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...shapes), fc.integer({ min: MAX_BODY_BYTES - 2048, max: MAX_BODY_BYTES + 2048 }), async (shape, size) => {
      // A body of exactly `size` bytes: a long string inside a message, or a broken one.
      const around = (pad: string) => {
        const skeleton = {
          argument: (p: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list","arguments":{"state":"${p}"}}}`,
          meta: (p: string) => `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"pad":"${p}"}}}`,
          id: (p: string) => `{"jsonrpc":"2.0","id":"${p}","method":"ping"}`,
          batch: (p: string) => `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized","params":{"pad":"${p}"}}]`,
          broken: (p: string) => `{"jsonrpc":"2.0","id":4,"method":"ping","params":"${p}`,
        }[shape];
        return skeleton(pad);
      };
      const payload = around('x'.repeat(Math.max(0, size - around('').length)));
      const answer = await rawPost(daemon.url, headers, payload);
      if (Buffer.byteLength(payload) > MAX_BODY_BYTES) {
        assert.equal(answer.status, 413, `${shape} of ${Buffer.byteLength(payload)} bytes`);
        assert.equal(JSON.parse(answer.text).error.code, -32600);
      } else {
        checkAnswer(answer, payload, true);
        // An id is echoed as sent, whatever its length; nothing else is.
        if (shape !== 'id') assert.ok(answer.text.length <= 64 * 1024, `${shape} of ${payload.length} bytes: an answer of ${answer.text.length} chars`);
      }
      assert.equal(await healthSessions(daemon), 2);
    }),
    params(8),
  );
  await assertHealthy(t, daemon, tools);
});

// ---------------------------------------------------------------------------------------------
// Defects the fuzz found, reproduced as they stand (todo until fixed; see OPEN_DEFECTS)

const defectTodo = (name: Defect) => (OPEN_DEFECTS.has(name) ? { todo: `open defect ${name}` } : {});

test('a request whose id or progressToken is an integer beyond 2^53 is refused with -32600, not left unanswered', defectTodo('unsafe-integer-id'), async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const headers = { ...HEADERS, 'mcp-session-id': session };
  const bodies = [
    '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":1e21,"method":"ping"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"progressToken":1e21}}}',
    `{"jsonrpc":"2.0","id":1e21,"method":"tools/list","params":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
  ];
  for (const text of bodies) {
    const answer = await rawPost(daemon.url, headers, text, 3000).catch((error: Error) => ({ status: 0, headers: {}, text: `no answer: ${error.message}` }));
    assert.equal(answer.status, 400, `${text.slice(0, 100)} -> ${answer.status} ${answer.text.slice(0, 200)}`);
    assert.equal(JSON.parse(answer.text).error.code, -32600);
  }
  assert.deepEqual(errorLines(daemon), []);
});

test('a tool error echoes unknown field names within bounds, however many or long they are', defectTodo('unbounded-unknown-field-echo'), async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 1]));
  for (const args of [many, { ['x'.repeat(1_000_000)]: 1 }]) {
    const result = await tools.call('list', args);
    assert.equal(result.isError, true);
    assert.equal(result.structured.error.code, 'ERR_INVALID_INPUT');
    assert.ok(result.text.length <= MAX_ERROR_TEXT, `an answer of ${result.text.length} chars to ${Object.keys(args).length} unknown fields`);
  }
});

test('a response the client sends, however deeply nested, is taken or refused without an internal error', defectTodo('deep-response-stack-overflow'), async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const headers = { ...HEADERS, 'mcp-session-id': session };
  const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
  const bodies = [
    `{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m","data":${deep}}}`,
    `{"jsonrpc":"2.0","id":1,"result":{"a":${deep}}}`,
    `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":"x","result":{"a":${deep}}}]`,
  ];
  for (const text of bodies) {
    const answer = await rawPost(daemon.url, headers, text, 3000);
    assert.ok(answer.status === 202 || answer.status === 200, `${text.slice(0, 80)} -> ${answer.status} ${answer.text.slice(0, 200)}`);
    if (answer.status === 200) assert.deepEqual(JSON.parse(answer.text).map((response: { id: unknown }) => response.id), [5]);
  }
  assert.deepEqual(errorLines(daemon), []);
});

test('a known method whose params its schema refuses is answered -32602 Invalid params, not -32603 with zod issues', defectTodo('invalid-params-internal-error'), async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const headers = { ...HEADERS, 'mcp-session-id': session };
  const bodies = [
    { jsonrpc: '2.0', id: 0, method: 'tools/call' },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 5 } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list', arguments: 'x' } },
    { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 1 } },
  ];
  for (const message of bodies) {
    const answer = await rawPost(daemon.url, headers, JSON.stringify(message), 3000);
    const json = JSON.parse(answer.text);
    assert.deepEqual([answer.status, json.id, json.error?.code], [200, message.id, -32602], `${JSON.stringify(message)} -> ${answer.text.slice(0, 200)}`);
  }
});

test('run echoes a cwd the OS refuses within bounds, however long it is', defectTodo('unbounded-cwd-echo'), async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const result = await tools.call('run', { command: 'true', cwd: 'x'.repeat(100_000) });
  assert.equal(result.isError, true);
  assert.equal(result.structured.error.code, 'ERR_INVALID_INPUT');
  assert.ok(result.text.length <= MAX_ERROR_TEXT, `an answer of ${result.text.length} chars: ${result.text.slice(0, 200)}`);
});

test('an initialize without an id, sent without a session, opens no session nobody is told of', defectTodo('initialize-notification-session'), async (t) => {
  const daemon = await startTestDaemon(t);
  const { id: _, ...notification } = INITIALIZE;
  for (let i = 0; i < 3; i++) {
    const answer = await rawPost(daemon.url, HEADERS, JSON.stringify(notification), 3000);
    assert.equal(answer.headers['mcp-session-id'], undefined);
  }
  assert.equal(await healthSessions(daemon), 0, 'each answer to an initialize notification left a session open');
});
