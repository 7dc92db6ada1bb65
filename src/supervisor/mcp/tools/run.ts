// run: starts `bash -c COMMAND` as a background task and waits a little for its result.
import { resolve } from 'node:path';
import { z } from 'zod';
import { directoryProblem, ToolInputError } from '../../../errors.js';
import { echoValue } from '../../../shared/echo.js';
import { MAX_CPU_LIMIT, MAX_MEMORY_LIMIT_MB, MAX_PROCESSES_LIMIT, MIN_CPU_LIMIT } from '../../../process/limits.js';
import { runEndAdvice } from '../end-notice.js';
import { runApprovalAdvice, type ToolAdvice } from '../approval-advice.js';
import { callerLeft, defineTool, field, objectField } from '../tool.js';
import { sandboxSchema } from '../../tasks/task-sandbox.js';
import { runCallerOf } from '../../callers/task-callers.js';
import { clientOf } from '../../callers/call-clients.js';
import {
  inputTextField,
  TASK_ID_ACCEPTS,
  TASK_ID_PATTERN,
  verboseField,
  waitForField,
  waitForPortField,
  waitOutcomeFields,
  waitSecondsField,
  wellFormed,
} from '../shared-fields.js';
import { assertPortFree } from '../../readiness/exclusive-port.js';
import { awaitReadiness } from '../../readiness/readiness.js';
import { compileWaitPattern } from '../../readiness/wait-pattern.js';
import { DEFAULT_COLUMNS, DEFAULT_ROWS, MAX_TERMINAL_SIZE } from '../../../process/terminals.js';
import { DEFAULT_TAIL_BYTES } from '../../model/task-snapshot.js';
import { describeWaited, taskResultSchema } from '../task-snapshot-schema.js';

export const MAX_COMMAND_BYTES = 256 * 1024;
export const DEFAULT_WAIT_SECONDS = 3;
const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A run's own variables at most: past about 2 MiB of strings an exec fails anyway (E2BIG). */
const MAX_ENV_VARIABLES = 4096;
const MAX_ENV_BYTES = 1024 * 1024;
/**
 * One variable at most, as an exec takes it (NAME=VALUE and its NUL): the kernel's bound on one
 * string of an exec (MAX_ARG_STRLEN, 32 pages of 4 KiB). A longer one failed the task's exec with
 * "Argument list too long", exit 126.
 */
const MAX_ENV_STRING_BYTES = 128 * 1024;
/** The bytes of one variable as an exec's environment holds it: NAME=VALUE and a NUL. */
const variableBytes = (name: string, value: string): number => Buffer.byteLength(name) + Buffer.byteLength(value) + 2;
const envBytes = (env: Record<string, string>): number =>
  Object.entries(env).reduce((sum, [name, value]) => sum + variableBytes(name, value), 0);

const terminalSizeField = (name: string, defaultSize: number) =>
  field(
    z.number().int().min(1).max(MAX_TERMINAL_SIZE).optional(),
    `an integer from 1 to ${MAX_TERMINAL_SIZE}, given only with pty: true`,
    `pty ${name}, 1-${MAX_TERMINAL_SIZE} (default ${defaultSize}).`,
  );
/** Text an exec can carry: no NUL, and no lone surrogate (wellFormed). */
const execText = (text: string) => !text.includes('\0') && wellFormed(text);
const inputSchema = z.strictObject({
  command: field(
    z
      .string()
      .min(1)
      .refine(execText)
      .refine((text) => Buffer.byteLength(text) <= MAX_COMMAND_BYTES),
    `a non-empty string of at most ${MAX_COMMAND_BYTES} bytes with no NUL character or lone surrogate`,
    'Shell command, at most 256 KiB.',
  ),
  name: field(
    z.string().regex(TASK_ID_PATTERN).optional(),
    TASK_ID_ACCEPTS,
    'Task id instead of task-N, e.g. "build".',
  ),
  wait_seconds: waitSecondsField(DEFAULT_WAIT_SECONDS, `Seconds, 0-30 (default ${DEFAULT_WAIT_SECONDS}).`),
  timeout_seconds: field(
    z.number().positive().max(31_536_000).optional(),
    'a positive number of seconds (at most one year)',
    'Seconds until it is ended (timed_out); default none.',
  ),
  cwd: field(
    z.string().min(1).refine(execText).optional(),
    'the path of an existing directory',
    "Working directory (default the daemon's).",
  ),
  env: field(
    z
      .record(z.string().regex(ENV_NAME_PATTERN), z.string().refine(execText))
      .superRefine((env, context) => {
        for (const [name, value] of Object.entries(env))
          if (variableBytes(name, value) > MAX_ENV_STRING_BYTES)
            context.addIssue({ code: 'custom', path: [name], message: 'a variable the kernel cannot pass' });
      })
      .refine((env) => Object.keys(env).length <= MAX_ENV_VARIABLES && envBytes(env) <= MAX_ENV_BYTES)
      .optional(),
    `an object of at most ${MAX_ENV_VARIABLES} variables (${MAX_ENV_BYTES} bytes in all and ${MAX_ENV_STRING_BYTES} each, as an exec takes them: NAME=VALUE and a NUL) mapping names (letters, digits and _, not starting with a digit) to string values without NUL or lone surrogates`,
    'Variables to add.',
  ),
  stdin: inputTextField('Text for stdin, then closed (default /dev/null).', false),
  pty: field(z.boolean().optional(), 'true or false', 'Run on a terminal (all output in stdout).'),
  cols: terminalSizeField('columns', DEFAULT_COLUMNS),
  rows: terminalSizeField('rows', DEFAULT_ROWS),
  interactive: field(z.boolean().optional(), 'true or false', 'Keep stdin open for the input tool.'),
  memory_limit_mb: field(
    z.number().int().min(1).max(MAX_MEMORY_LIMIT_MB).optional(),
    `an integer of MiB from 1 to ${MAX_MEMORY_LIMIT_MB}`,
    'Memory cap in MiB; past it the kernel kills the task.',
  ),
  max_processes: field(
    z.number().int().min(1).max(MAX_PROCESSES_LIMIT).optional(),
    `an integer from 1 to ${MAX_PROCESSES_LIMIT}`,
    'Cap on processes and threads.',
  ),
  cpu_limit: field(
    z.number().min(MIN_CPU_LIMIT).max(MAX_CPU_LIMIT).optional(),
    `a number of CPUs from ${MIN_CPU_LIMIT} to ${MAX_CPU_LIMIT}`,
    `CPUs, ${MIN_CPU_LIMIT}-${MAX_CPU_LIMIT}.`,
  ),
  sandbox: objectField(
    sandboxSchema.optional(),
    'an object {"write": [absolute directories], "network": true or false}, both members optional',
    'Confinement, e.g. {"write": ["/tmp/x"], "network": false}; ERR_SANDBOX_UNAVAILABLE where the host cannot.',
  ),
  wait_for: waitForField(),
  wait_for_port: waitForPortField(),
  exclusive_port: field(
    z.number().int().min(1).max(65_535).optional(),
    'a TCP port from 1 to 65535',
    'TCP port that must be free to start.',
  ),
  verbose: verboseField(),
});

/** What an agent reads to decide how to call it. */
const description = (advice: ToolAdvice) =>
  [
    `Start \`bash -c COMMAND\` as a background task and return its id. Waits up to wait_seconds (0-30 s, default ${DEFAULT_WAIT_SECONDS}): a quick command returns its exit code and output; ${runEndAdvice(advice)}${runApprovalAdvice(advice)}`,
    'output reads its output; kill ends it and all it started.',
  ].join(' ');

export const runTool = defineTool({
  name: 'run',
  title: 'Run a shell command in the background',
  description,
  inputSchema,
  outputSchema: taskResultSchema.extend(waitOutcomeFields),
  annotations: { destructiveHint: true, openWorldHint: true },
  async handler(input, { tasks, reads, callers }, from, options) {
    const caller = runCallerOf(callers.of(from));
    const cwd = resolve(input.cwd ?? process.cwd());
    checkDirectory(cwd, input.cwd);
    for (const size of ['cols', 'rows'] as const) {
      if (input[size] !== undefined && input.pty !== true) {
        throw new ToolInputError(
          `Invalid run input: "${size}" sets the size of a terminal and is taken only with pty: true; got ${echoValue(input[size])} with pty ${echoValue(input.pty)}`,
        );
      }
    }
    const pattern = input.wait_for === undefined ? null : compileWaitPattern(input.wait_for);
    if (input.exclusive_port !== undefined) await assertPortFree(tasks, input.exclusive_port);
    const request = {
      command: input.command,
      name: input.name ?? null,
      timeoutSeconds: input.timeout_seconds ?? null,
      cwd,
      env: input.env ?? {},
      stdin: input.stdin ?? null,
      terminal: input.pty === true ? { cols: input.cols ?? DEFAULT_COLUMNS, rows: input.rows ?? DEFAULT_ROWS } : null,
      interactive: input.interactive ?? false,
      limits: { memoryLimitMb: input.memory_limit_mb, maxProcesses: input.max_processes, cpuLimit: input.cpu_limit },
      sandbox: input.sandbox,
      caller,
    };
    const want = { pattern, port: input.wait_for_port ?? null };
    const { record, waited } = await tasks.runAndWait(
      request,
      async (id) =>
        want.pattern === null && want.port === null
          ? (await tasks.waitForEnd(id, input.wait_seconds, options.askable), null)
          : await awaitReadiness(tasks, reads, id, want, input.wait_seconds, clientOf(from, callers)),
      input.wait_seconds,
      () => callerLeft(from),
    );
    return describeWaited(await tasks.snapshotNow(record, DEFAULT_TAIL_BYTES), waited, input.verbose);
  },
});

function checkDirectory(path: string, given: string | undefined): void {
  const problem = directoryProblem(path);
  if (problem !== null) {
    throw new ToolInputError(
      `Invalid run input: "cwd" must be the path of an existing directory; got ${echoValue(given)}: ${problem}`,
    );
  }
}
