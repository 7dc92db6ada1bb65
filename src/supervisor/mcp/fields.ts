// Input fields that more than one tool takes.
import { z } from 'zod';
import { field } from './tool.js';
import { DEFAULT_TAIL_BYTES, MAX_TAIL_BYTES } from '../model/task-snapshot.js';

export const MAX_WAIT_SECONDS = 30;
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
export const TASK_ID_ACCEPTS = '1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit';

export const taskIdField = () =>
  field(z.string().regex(TASK_ID_PATTERN), `a task id: ${TASK_ID_ACCEPTS}`, 'The task id that run returned (its name, or a generated task-N).');

export const waitSecondsField = (defaultSeconds: number, description: string) =>
  field(z.number().min(0).max(MAX_WAIT_SECONDS).default(defaultSeconds), `a number of seconds from 0 to ${MAX_WAIT_SECONDS}`, description);

export const tailBytesField = () =>
  field(
    z.number().int().min(0).max(MAX_TAIL_BYTES).default(DEFAULT_TAIL_BYTES),
    `an integer from 0 to ${MAX_TAIL_BYTES}`,
    `How many bytes from the end of each output stream to return (default ${DEFAULT_TAIL_BYTES}). The whole output is in the files at stdout_path and stderr_path.`,
  );

/** stdin and input text: a pipe or terminal takes it in pieces, so one call carries a bounded amount. */
export const MAX_INPUT_BYTES = 1024 * 1024;

export function inputTextField(description: string, required: true): z.ZodString;
export function inputTextField(description: string, required: false): z.ZodOptional<z.ZodString>;
export function inputTextField(description: string, required: boolean): z.ZodType {
  const text = z.string().refine((value) => Buffer.byteLength(value) <= MAX_INPUT_BYTES);
  return field(required ? text : text.optional(), `a string of at most ${MAX_INPUT_BYTES} bytes`, description);
}
