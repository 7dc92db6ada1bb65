// Values of every kind a client could put in a fuzzed message, the arguments of each tool (valid
// most of the time, anything otherwise) and the writer of raw JSON text that can hold what
// JSON.stringify cannot (number literals beyond a double, nesting past any stack).
import fc from 'fast-check';

export const TOOL_NAMES = ['run', 'status', 'output', 'kill', 'list', 'input'] as const;
const TASK_STATES = ['pending', 'running', 'done', 'timed_out', 'killed', 'interrupted'];

// ---------------------------------------------------------------------------------------------
// Values of every kind

/** Text put into a raw body as is: number literals JSON.stringify cannot write, nesting it cannot reach. */
export class Raw {
  constructor(readonly text: string) {}
}

const loneSurrogates = fc.constantFrom('\ud800', '\udfff', 'a\udc00b', '\ud83d', '\ude00x');
const oddStrings = fc.constantFrom(
  '',
  ' ',
  '\0',
  'a\0b',
  'true',
  'null',
  '0',
  '__proto__',
  'constructor',
  'toString',
  '../../etc/passwd',
  '%s%n%x',
  '\u202e',
  '\r\n',
  '\ufeff',
  '😀',
  'SIGKILL',
  'task-1',
  'fuzz-a',
);
const longString = fc.integer({ min: 1, max: 300_000 }).map((n) => 'x'.repeat(n));
export const anyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: oddStrings },
  { weight: 2, arbitrary: loneSurrogates },
  {
    weight: 1,
    arbitrary: fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}\0${b}`),
  },
  { weight: 1, arbitrary: longString },
);

export const anyNumber = fc.oneof(
  fc.double(),
  fc.integer(),
  fc.constantFrom(
    1e308,
    -1e308,
    5e-324,
    -0,
    0,
    1,
    -1,
    0.5,
    1.5,
    30,
    30.000001,
    65535,
    65536,
    1000,
    1001,
    4194304,
    1e21,
    2 ** 53 + 2,
    -(2 ** 53) - 2,
    Number.MAX_SAFE_INTEGER,
    Number.MIN_SAFE_INTEGER,
  ),
);

/** Nested `depth` levels deep, as a JS value (for the SDK's client, whose JSON.stringify recurses). */
function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 0;
  for (let i = 0; i < depth; i++) value = kind === 'array' ? [value] : { a: value };
  return value;
}
const deepValue = fc
  .tuple(fc.integer({ min: 1, max: 2000 }), fc.constantFrom('array' as const, 'object' as const))
  .map(([depth, kind]) => nested(depth, kind));

/** Own keys the prototype chain also has: JSON.parse makes them plain members, and so does this. */
export function withKeys(base: Record<string, unknown>, entries: Array<[string, unknown]>): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base };
  for (const [key, value] of entries)
    Object.defineProperty(result, key, { value, enumerable: true, writable: true, configurable: true });
  return result;
}
export const trickyKey = fc.constantFrom(
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  '',
  ' ',
  '\0',
  '\ud800',
  'command ',
  'ID',
  'wait-seconds',
  '$ref',
);
const unknownKey = fc.oneof(trickyKey, fc.string({ unit: 'binary', maxLength: 30 }), longString);
const protoObject = fc
  .array(fc.tuple(trickyKey, fc.oneof(fc.constant({ polluted: true }), fc.jsonValue({ maxDepth: 2 }))), {
    maxLength: 3,
  })
  .map((entries) => withKeys({}, entries));

/** Any JSON value a client could send, of the wrong type for most fields. */
const junk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: anyString },
  { weight: 3, arbitrary: anyNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 1, arbitrary: fc.array(anyString, { maxLength: 5 }) },
  { weight: 1, arbitrary: deepValue },
  { weight: 1, arbitrary: protoObject },
);

// ---------------------------------------------------------------------------------------------
// Tool arguments: each field valid most of the time, anything else otherwise, unknown fields beside

export const taskId = fc.oneof(
  fc.constantFrom('task-1', 'task-2', 'task-3', 'fuzz-a', 'fuzz-b'),
  fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
);
const smallWait = fc.double({ min: 0, max: 0.3, noNaN: true });
const pattern = fc.oneof(
  fc.constantFrom(
    'ready',
    'listening on',
    '.*',
    '^$',
    '(a)\\1',
    '(?=x)',
    '(?<=y)z',
    '[',
    '\\',
    'a{2,1}',
    '\\p{L}+',
    'x'.repeat(1025),
  ),
  fc.string({ unit: 'binary', maxLength: 30 }),
);
const port = fc.integer({ min: 1, max: 65535 });

export const VALID_FIELDS: Record<(typeof TOOL_NAMES)[number], Record<string, fc.Arbitrary<unknown>>> = {
  run: {
    command: fc.constant('true'),
    name: taskId,
    wait_seconds: smallWait,
    timeout_seconds: fc.double({ min: 0.001, max: 31_536_000, noNaN: true }),
    cwd: fc.constantFrom(
      '/',
      '/tmp',
      '.',
      '..',
      '/proc',
      '/proc/self',
      '/dev/null',
      '/etc/passwd',
      '/no/such/dir',
      'relative/dir',
      '/root',
      '//',
      '/tmp/../tmp',
    ),
    env: fc.dictionary(
      fc.stringMatching(/^[A-Za-z0-9_]{0,12}$/).map((name) => `FUZZ_${name}`),
      fc.string({ unit: 'binary', maxLength: 50 }),
      { maxKeys: 4 },
    ),
    stdin: fc.oneof(
      fc.string({ unit: 'binary', maxLength: 100 }),
      fc.constantFrom('', 'y\n', 'x'.repeat(1024 * 1024 + 1)),
    ),
    pty: fc.boolean(),
    cols: fc.integer({ min: 1, max: 1000 }),
    rows: fc.integer({ min: 1, max: 1000 }),
    interactive: fc.boolean(),
    memory_limit_mb: fc.integer({ min: 1, max: 4 * 1024 * 1024 }),
    max_processes: fc.integer({ min: 1, max: 100_000 }),
    cpu_limit: fc.double({ min: 0.01, max: 1024, noNaN: true }),
    sandbox: fc.record(
      {
        write: fc.array(
          fc.oneof(fc.constantFrom('/tmp', '/', '/no/such/dir', 'relative', '/tmp/../tmp', '/dev/null', ''), junk),
          { maxLength: 3 },
        ),
        network: fc.oneof(fc.boolean(), junk),
      },
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
    since: fc.oneof(
      fc.constantFrom('', 'bzEgMDAwMDAwMDAtMDAwMCAwIDEgMCAx', 'bzEgeCAtMSAwIDAgMA'),
      fc.base64String({ maxLength: 80 }),
    ),
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
    text: fc.oneof(
      fc.string({ unit: 'binary', maxLength: 100 }),
      fc.constantFrom('', 'y\n', 'x'.repeat(1024 * 1024 + 1)),
    ),
    eof: fc.boolean(),
  },
};

/** Keeps a call harmless and quick: `true` or a command refused before it runs, short waits. */
export function harmless(tool: string, args: Record<string, unknown>): Record<string, unknown> {
  if (
    tool === 'run' &&
    typeof args.command === 'string' &&
    args.command.length > 0 &&
    !args.command.includes('\0') &&
    Buffer.byteLength(args.command) <= 256 * 1024
  ) {
    args.command = 'true';
  }
  if (
    (tool === 'run' || tool === 'status' || tool === 'output') &&
    typeof args.wait_seconds === 'number' &&
    args.wait_seconds > 0.5
  )
    args.wait_seconds = 0.5;
  if (tool === 'run' && args.env !== null && typeof args.env === 'object' && !Array.isArray(args.env)) {
    // bash reads BASH_ENV and friends at start: a valid name that is not FUZZ_* is dropped.
    const env = args.env as Record<string, unknown>;
    for (const name of Object.keys(env))
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !name.startsWith('FUZZ_')) delete env[name];
  }
  return args;
}

/** One tool's name and its arguments, each field valid most of the time, unknown fields beside now and then. */
export const toolCall = fc.constantFrom(...TOOL_NAMES).chain((tool) => {
  const fields = Object.fromEntries(
    Object.entries(VALID_FIELDS[tool]).map(([name, valid]) => [
      name,
      fc.oneof({ weight: 5, arbitrary: valid }, { weight: 1, arbitrary: junk }),
    ]),
  );
  return fc
    .tuple(
      fc.record(fields, { requiredKeys: [] }),
      fc.array(fc.tuple(unknownKey, junk), { maxLength: 3 }),
      fc.double({ min: 0, max: 1, noNaN: true }),
    )
    .map(([args, extra, p]) => ({ tool, args: harmless(tool, p < 0.7 ? withKeys(args, []) : withKeys(args, extra)) }));
});

// ---------------------------------------------------------------------------------------------
// Raw JSON text

/**
 * JSON text of a value that may hold Raw nodes (written verbatim). Iterative: the values are nested
 * up to thousands of levels deep, past what a recursive writer's stack holds on every Node version
 * (Node 24 overflowed on one).
 */
export function serialize(value: unknown): string {
  const parts: string[] = [];
  const pending: unknown[] = [value];
  const push = (items: unknown[]) => {
    for (let i = items.length - 1; i >= 0; i--) pending.push(items[i]);
  };
  while (pending.length > 0) {
    const item = pending.pop();
    if (item instanceof Raw) parts.push(item.text);
    else if (Array.isArray(item))
      push([
        new Raw('['),
        ...item.flatMap((element, i) => (i === 0 ? [element] : [new Raw(','), element])),
        new Raw(']'),
      ]);
    else if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item).filter(([, member]) => member !== undefined);
      push([
        new Raw('{'),
        ...entries.flatMap(([key, member], i) => [new Raw(`${i === 0 ? '' : ','}${JSON.stringify(key)}:`), member]),
        new Raw('}'),
      ]);
    } else parts.push(JSON.stringify(item) ?? 'null');
  }
  return parts.join('');
}

const deepRaw = fc
  .tuple(fc.integer({ min: 1, max: 100_000 }), fc.constantFrom('array', 'object'))
  .map(
    ([depth, kind]) =>
      new Raw(
        kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`,
      ),
  );
export const numberLiterals = fc
  .constantFrom(
    '-0',
    '1e999',
    '-1e999',
    '1E2',
    '0.0',
    '1.0',
    '-0.0',
    '5e-324',
    '1e-400',
    '1e21',
    '9007199254740993',
    '123456789012345678901234567890',
  )
  .map((text) => new Raw(text));
export const rawJunk: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: junk },
  { weight: 1, arbitrary: deepRaw },
  { weight: 1, arbitrary: numberLiterals },
);
