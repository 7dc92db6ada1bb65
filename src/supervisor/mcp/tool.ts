// The shape of one MCP tool as plain data, and the checking of a call's arguments against it.
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { ToolInputError } from '../../errors.js';
import { echoValue } from '../../shared/echo.js';
import { isObject } from './json-object.js';
import type { TaskCallers } from '../callers/task-callers.js';
import type { ReadPool } from '../output/read-pool.js';
import type { TaskService } from '../tasks/task-service.js';
import type { ToolAdvice } from './approval-advice.js';

export interface ToolContext {
  tasks: TaskService;
  /** The reader threads: task output is read, and patterns run, there. */
  reads: ReadPool;
  /** Who made a call (one of the daemon's tasks, or not): `callers.of(from)`, `from` the request a handler is given. */
  callers: TaskCallers;
}

/** How a call may be answered, beyond its arguments. */
export interface CallOptions {
  /**
   * The caller's client can be handed a form asking a person (a 2026-07-28 run from a client that
   * declared elicitation): run's wait ends when an exec of its task begins to wait for one.
   */
  askable?: boolean;
}

export interface ToolResult<Output> {
  structured: Output;
  /** A short text for clients and readers that do not use structured content. */
  text: string;
}

/** A tool's result: one object, or a union of objects (one shape per way of calling it). */
export type OutputSchema = z.ZodObject | z.ZodUnion<readonly z.ZodObject[]>;

export interface ToolDefinition<Input extends z.ZodObject = z.ZodObject, Output extends OutputSchema = OutputSchema> {
  name: string;
  title: string;
  /** What an agent reads to decide how to call it; a function where it depends on how tasks' ends are told. */
  description: string | ((advice: ToolAdvice) => string);
  inputSchema: Input;
  outputSchema: Output;
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
  /** Synchronous where it need not wait: then its answer goes out in the same turn. `from`: the HTTP request that carried the call. */
  handler(
    input: z.output<Input>,
    context: ToolContext,
    from: IncomingMessage,
    options: CallOptions,
  ): ToolResult<z.output<Output>> | Promise<ToolResult<z.output<Output>>>;
}

/**
 * Whether the client that sent `from` has hung up (its connection is closed, or closed for
 * writing): it can be answered nothing, so a task's result is not handed over to it.
 */
export function callerLeft(from: IncomingMessage): boolean {
  return from.socket.destroyed || !from.socket.writable;
}

/** Declares a tool; a function only so that TypeScript ties the handler's types to the schemas. */
export function defineTool<Input extends z.ZodObject, Output extends OutputSchema>(
  definition: ToolDefinition<Input, Output>,
): ToolDefinition<Input, Output> {
  return definition;
}

const ACCEPTS = new WeakMap<z.ZodType, string>();

/**
 * An input field: its schema, what it accepts in words (for error messages, after "must be"),
 * and its description (what an agent reads to decide how to call the tool).
 */
export function field<Schema extends z.ZodType>(schema: Schema, accepts: string, description: string): Schema {
  const described = schema.describe(description);
  ACCEPTS.set(described, accepts);
  return described;
}

/** Object fields whose own issues speak for themselves: each names its member (sandbox.write[0]). */
const NESTED = new WeakSet<z.ZodType>();

/** An object field whose members' schemas word their issues as "must be ..." (zod's `error`): refusals name the member. */
export function objectField<Schema extends z.ZodType>(schema: Schema, accepts: string, description: string): Schema {
  const described = field(schema, accepts, description);
  NESTED.add(described);
  return described;
}

const MAX_UNKNOWN_SHOWN = 5;
const ECHO_NAME_CHARS = 40;

/** Checks `args` against the tool's input schema; throws a ToolInputError that names each bad field. */
export function parseToolInput<Input extends z.ZodObject>(tool: ToolDefinition<Input>, args: unknown): z.output<Input> {
  const input = args ?? {};
  refuseOwnProto(tool, input);
  const result = tool.inputSchema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const shape = tool.inputSchema.shape as Record<string, z.ZodType>;
  const problems = new Map<string, string>();
  for (const issue of result.error.issues) {
    const key = issue.path[0];
    const nested = typeof key === 'string' && shape[key] !== undefined && NESTED.has(shape[key]);
    if (nested && (issue.path.length > 1 || (issue.code === 'unrecognized_keys' && issue.path.length === 1))) {
      const where = pathText(issue.path);
      if (!problems.has(where)) problems.set(where, describeNestedIssue(issue, input, shape[key]!));
    } else if (issue.code === 'unrecognized_keys') {
      // A few of them, each cut short: a client's field names are echoed within bounds too.
      const shown = issue.keys
        .slice(0, MAX_UNKNOWN_SHOWN)
        .map((name) => JSON.stringify(name.length > ECHO_NAME_CHARS ? `${name.slice(0, ECHO_NAME_CHARS)}...` : name));
      const more = issue.keys.length > MAX_UNKNOWN_SHOWN ? ` and ${issue.keys.length - MAX_UNKNOWN_SHOWN} more` : '';
      problems.set(
        '',
        `unknown field${issue.keys.length > 1 ? 's' : ''} ${shown.join(', ')}${more}; ${tool.name} accepts: ${Object.keys(shape).join(', ')}`,
      );
    } else if (typeof key === 'string' && shape[key]) {
      if (problems.has(key)) continue;
      const value = (input as Record<string, unknown>)[key];
      const accepts = acceptedBy(shape[key]) ?? issue.message;
      problems.set(
        key,
        value === undefined
          ? `"${key}" is required: ${accepts}`
          : `"${key}" must be ${accepts}; got ${echoValue(value)}${memberAt(issue, value)}`,
      );
    } else {
      problems.set('', `the arguments must be an object of named fields; got ${echoValue(input)}`);
    }
  }
  throw new ToolInputError(`Invalid ${tool.name} input: ${[...problems.values()].join('; ')}`);
}

/**
 * Which member of an object field is at fault, where the issue is in one (`env`'s 100th variable):
 * the echo of the whole object may be cut before it.
 */
function memberAt(issue: z.core.$ZodIssue, value: unknown): string {
  const member = issue.path[1];
  if (issue.path.length !== 2 || typeof member !== 'string' || !isObject(value)) return '';
  const name = JSON.stringify(member.length > ECHO_NAME_CHARS ? `${member.slice(0, ECHO_NAME_CHARS)}...` : member);
  return issue.code === 'invalid_key'
    ? ` (its member ${name} is not a name it accepts)`
    : ` (its member ${name} is ${echoValue(value[member])})`;
}

/** What a field accepts, in words; a field made optional after it was declared is described by what it wraps. */
function acceptedBy(schema: z.ZodType): string | undefined {
  const inner = (schema as { unwrap?: () => z.ZodType }).unwrap?.();
  return ACCEPTS.get(schema) ?? (inner && ACCEPTS.get(inner));
}

/** zod's record drops an own `__proto__` member without an issue: a field that holds one is refused by name. */
function refuseOwnProto(tool: ToolDefinition<z.ZodObject>, input: unknown): void {
  if (!isObject(input)) return;
  const shape = tool.inputSchema.shape as Record<string, z.ZodType>;
  for (const [key, value] of Object.entries(input)) {
    if (shape[key] === undefined || !isObject(value) || !Object.hasOwn(value, '__proto__')) continue;
    const accepts = acceptedBy(shape[key]) ?? 'an object without a "__proto__" member';
    throw new ToolInputError(`Invalid ${tool.name} input: "${key}" must be ${accepts}; got ${echoValue(value)}`);
  }
}

/** `sandbox.write[0]`: where in the arguments an issue is. */
const pathText = (path: PropertyKey[]): string =>
  path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`)).join('');

/**
 * An issue inside an object field: its own message, which such a field's schema words as "must be
 * ..." (zod's `error` option), with the value echoed; or its unknown members and the ones it takes.
 */
function describeNestedIssue(issue: z.core.$ZodIssue, input: unknown, schema: z.ZodType): string {
  const where = pathText(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const object = (schema as { unwrap?: () => z.ZodType }).unwrap?.() ?? schema;
    const accepted = Object.keys((object as z.ZodObject).shape ?? {});
    return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys
      .slice(0, MAX_UNKNOWN_SHOWN)
      .map((name) => echoValue(name))
      .join(', ')} in "${where}"; it accepts: ${accepted.join(', ')}`;
  }
  let value: unknown = input;
  for (const part of issue.path)
    value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[part] : undefined;
  return `"${where}" ${issue.message}; got ${echoValue(value)}`;
}

/** The shape every refused tool call carries in its structuredContent. */
export interface ErrorBody {
  code: string;
  message: string;
}

/** What every refused call carries as structured content. */
export const errorOutputSchema = z.strictObject({
  error: z.strictObject({
    code: z.string().describe('A stable code to match on, e.g. ERR_UNKNOWN_TASK, ERR_NAME_BUSY, ERR_INVALID_INPUT'),
    message: z.string().describe('What was wrong, naming the field and echoing the value, and what is accepted'),
  }),
});

/**
 * A structured result as a model reads it: a member that is null is left out, at every depth
 * (absent means none). Booleans and numbers stay: a false or a 0 says something.
 */
export function omitNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(omitNulls);
  if (value === null || typeof value !== 'object') return value;
  const kept: Record<string, unknown> = {};
  for (const [key, member] of Object.entries(value)) if (member !== null) kept[key] = omitNulls(member);
  return kept;
}

/** The JSON Schema of a result after omitNulls: a member that may be null is not required. */
function relaxNullable(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(relaxNullable);
  if (schema === null || typeof schema !== 'object') return schema;
  const relaxed = Object.fromEntries(Object.entries(schema).map(([key, member]) => [key, relaxNullable(member)]));
  const { properties, required } = relaxed as { properties?: Record<string, unknown>; required?: string[] };
  if (properties !== undefined && required !== undefined)
    relaxed.required = required.filter((name) => !allowsNull(properties[name]));
  return relaxed;
}

const allowsNull = (schema: unknown): boolean => {
  const { type, anyOf } = (schema ?? {}) as { type?: unknown; anyOf?: unknown[] };
  return type === 'null' || (Array.isArray(type) && type.includes('null')) || (anyOf ?? []).some(allowsNull);
};

/** zod's bounds of a safe integer: no JSON number the daemon writes passes them, so a schema need not say them. */
const isSafeBound = (key: string, value: unknown): boolean =>
  (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) || (key === 'maximum' && value === Number.MAX_SAFE_INTEGER);

/**
 * An output schema as tools/list carries it: the same shapes, types, enums and required members,
 * without the prose (docs/tools.md says what each member means; the run and status task schema
 * came six times in one listing) and the safe-integer bounds; `anyOf [T, null]` as `type [T, "null"]`.
 */
export function leanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(leanSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const lean: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description' || isSafeBound(key, value)) continue;
    lean[key] =
      key === 'properties'
        ? Object.fromEntries(Object.entries(value as object).map(([name, member]) => [name, leanSchema(member)]))
        : leanSchema(value);
  }
  const options = lean.anyOf;
  if (!Array.isArray(options) || options.length !== 2) return lean;
  const [some, none] = options as Array<Record<string, unknown>>;
  if (typeof some?.type !== 'string' || 'enum' in some || JSON.stringify(none) !== '{"type":"null"}') return lean;
  const { anyOf: _, ...rest } = lean;
  return { ...some, ...rest, type: [some.type, 'null'] };
}

/** The tool as tools/list shows it, with JSON Schemas made once from the zod ones. */
export function listedTool(tool: ToolDefinition, advice: ToolAdvice) {
  const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
    const { $schema: _, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
    return rest;
  };
  // A result is the tool's own output or, with isError, the error body; clients (the SDK's among
  // them) validate structured content against this schema on errors too.
  const own = relaxNullable(jsonSchema(tool.outputSchema, 'output')) as Record<string, unknown>;
  const shapes = Array.isArray(own.anyOf) ? (own.anyOf as object[]) : [own];
  const outputSchema = leanSchema({
    type: 'object' as const,
    anyOf: [...shapes, jsonSchema(errorOutputSchema, 'output')],
  }) as Record<string, unknown>;
  return {
    name: tool.name,
    title: tool.title,
    description: typeof tool.description === 'string' ? tool.description : tool.description(advice),
    inputSchema: { type: 'object' as const, ...jsonSchema(tool.inputSchema, 'input') },
    outputSchema,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
}
