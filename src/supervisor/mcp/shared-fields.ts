// Input fields that more than one tool takes.
import { z } from 'zod';
import { field } from './tool.js';
import { DEFAULT_TAIL_BYTES } from '../model/task-snapshot.js';
import { MAX_TAIL_BYTES, MAX_WAIT_SECONDS } from '../../shared/tool-bounds.js';

export { MAX_WAIT_SECONDS };
import { MAX_PATTERN_CHARS } from '../readiness/wait-pattern.js';

export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const TASK_ID_ACCEPTS =
  '1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit';

export const taskIdField = () =>
  field(z.string().regex(TASK_ID_PATTERN), `a task id: ${TASK_ID_ACCEPTS}`, 'Task id from run.');

export const waitSecondsField = (defaultSeconds: number, description: string) =>
  field(
    z.number().min(0).max(MAX_WAIT_SECONDS).default(defaultSeconds),
    `a number of seconds from 0 to ${MAX_WAIT_SECONDS}`,
    description,
  );

export const verboseField = () => field(z.boolean().default(false), 'true or false', 'Every member, nulls too.');

export const tailBytesField = () =>
  field(
    z.number().int().min(0).max(MAX_TAIL_BYTES).default(DEFAULT_TAIL_BYTES),
    `an integer from 0 to ${MAX_TAIL_BYTES}`,
    `Bytes of each output's end, 0-${MAX_TAIL_BYTES} (default ${DEFAULT_TAIL_BYTES}).`,
  );

/** stdin and input text: a pipe or terminal takes it in pieces, so one call carries a bounded amount. */
export const MAX_INPUT_BYTES = 1024 * 1024;

/**
 * Text that UTF-8 can carry: no lone surrogate, which a JSON string may hold (`"\ud800"`) and which
 * would reach the task as U+FFFD, its bytes not the ones sent.
 */
export const wellFormed = (text: string): boolean => !/\p{Cs}/u.test(text);

export function inputTextField(description: string, required: true): z.ZodString;
export function inputTextField(description: string, required: false): z.ZodOptional<z.ZodString>;
export function inputTextField(description: string, required: boolean): z.ZodType {
  const text = z
    .string()
    .refine(wellFormed)
    .refine((value) => Buffer.byteLength(value) <= MAX_INPUT_BYTES);
  return field(
    required ? text : text.optional(),
    `a string of at most ${MAX_INPUT_BYTES} bytes with no lone surrogate`,
    description,
  );
}

export const waitForField = () =>
  field(
    z.string().min(1).max(MAX_PATTERN_CHARS).optional(),
    `a regular expression of 1 to ${MAX_PATTERN_CHARS} characters that runs in linear time (no backreferences or lookaround)`,
    'RE2 regular expression: return once an output line matches.',
  );

export const waitForPortField = () =>
  field(
    z.number().int().min(1).max(65_535).optional(),
    'a TCP port from 1 to 65535',
    'TCP port: return once the task listens on it.',
  );

/** What run and status add to a task's snapshot when they waited for readiness. */
export const waitOutcomeFields = {
  wait_result: z
    .enum(['matched', 'listening', 'ended', 'timeout'])
    .optional()
    .describe(
      "With wait_for or wait_for_port: what ended the wait (a match, a listening port, the task's end, or wait_seconds)",
    ),
  matched_line: z
    .string()
    .nullable()
    .optional()
    .describe('With wait_result "matched": the whole line that matched, cut to 1 KiB'),
};
