// run: starts `bash -c COMMAND` as a background task and waits a little for its result.
import { resolve } from 'node:path';
import { z } from 'zod';
import { directoryProblem, ToolInputError } from '../../../errors.js';
import { echoValue } from '../../../shared/echo.js';
import { MAX_CPU_LIMIT, MAX_MEMORY_LIMIT_MB, MAX_PROCESSES_LIMIT, MIN_CPU_LIMIT } from '../../../process/limits.js';
import { runEndAdvice, type EndAdvice } from '../advice.js';
import { defineTool, field, objectField } from '../tool.js';
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
} from '../fields.js';
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
/** The bytes of `env` as an exec's environment holds it: NAME=VALUE and a NUL each. */
const envBytes = (env: Record<string, string>): number =>
  Object.entries(env).reduce((sum, [name, value]) => sum + Buffer.byteLength(name) + Buffer.byteLength(value) + 2, 0);

const terminalSizeField = (name: string, defaultSize: number) =>
  field(
    z.number().int().min(1).max(MAX_TERMINAL_SIZE).optional(),
    `an integer from 1 to ${MAX_TERMINAL_SIZE}, given only with pty: true`,
    `The terminal's ${name} with pty (default ${defaultSize}).`,
  );
const noNul = (text: string) => !text.includes('\0');
const inputSchema = z.strictObject({
  command: field(
    z
      .string()
      .min(1)
      .refine(noNul)
      .refine((text) => Buffer.byteLength(text) <= MAX_COMMAND_BYTES),
    `a non-empty string of at most ${MAX_COMMAND_BYTES} bytes with no NUL character`,
    'The shell command, run as `bash -c COMMAND` in a process group of its own. Pipes, &&, redirections and `&` jobs all work; everything it starts is ended by kill.',
  ),
  name: field(
    z.string().regex(TASK_ID_PATTERN).optional(),
    TASK_ID_ACCEPTS,
    'A name to use as the task id instead of a generated one, e.g. "build" or "dev-server". Refused while a task of that name is pending or running; reusable once it has finished (its old output is replaced).',
  ),
  wait_seconds: waitSecondsField(
    DEFAULT_WAIT_SECONDS,
    `How long to wait for the task to finish before returning (0 to 30, default ${DEFAULT_WAIT_SECONDS}). A task that finishes in time comes back with its exit code and output; one still going comes back with its id and state.`,
  ),
  timeout_seconds: field(
    z.number().positive().max(31_536_000).optional(),
    'a positive number of seconds (at most one year)',
    "End the task after this many seconds: it gets SIGTERM, then SIGKILL after the daemon's grace period, and its state becomes timed_out. Default: the daemon's --default-timeout (none unless set).",
  ),
  cwd: field(
    z.string().min(1).refine(noNul).optional(),
    'the path of an existing directory',
    "The working directory; a relative path is taken from the daemon's own. Default: the daemon's working directory.",
  ),
  env: field(
    z
      .record(z.string().regex(ENV_NAME_PATTERN), z.string().refine(noNul))
      .refine((env) => Object.keys(env).length <= MAX_ENV_VARIABLES && envBytes(env) <= MAX_ENV_BYTES)
      .optional(),
    `an object of at most ${MAX_ENV_VARIABLES} variables (${MAX_ENV_BYTES} bytes in all, as an exec takes them) mapping names (letters, digits and _, not starting with a digit) to string values without NUL`,
    'Environment variables added to the daemon\'s task environment, e.g. {"NODE_ENV": "test"}.',
  ),
  stdin: inputTextField(
    "Text written to the task's standard input, which is then closed (unless interactive). Without it stdin is /dev/null, so a command that asks a question gets end-of-file instead of hanging.",
    false,
  ),
  pty: field(
    z.boolean().optional(),
    'true or false',
    `Run on a pseudo-terminal (${DEFAULT_COLUMNS}x${DEFAULT_ROWS}, TERM=xterm-256color) for programs that act differently without one: progress bars, colour, isatty checks, REPLs. stdout and stderr both go to stdout_path, as a terminal shows them (with \\r\\n line ends).`,
  ),
  cols: terminalSizeField('width in columns', DEFAULT_COLUMNS),
  rows: terminalSizeField('height in rows', DEFAULT_ROWS),
  interactive: field(
    z.boolean().optional(),
    'true or false',
    'Keep stdin open (a pipe, or the terminal with pty) so you can answer prompts or drive a REPL with the input tool; without it stdin is closed after the stdin text.',
  ),
  memory_limit_mb: field(
    z.number().int().min(1).max(MAX_MEMORY_LIMIT_MB).optional(),
    `an integer of MiB from 1 to ${MAX_MEMORY_LIMIT_MB}`,
    "Cap the memory of the whole task, e.g. 2048 for a build that may leak. Past it the kernel kills the task (all of it) and it ends with oom_killed: true, instead of taking the container down. Default: the daemon's --task-memory-limit-mb (none unless set).",
  ),
  max_processes: field(
    z.number().int().min(1).max(MAX_PROCESSES_LIMIT).optional(),
    `an integer from 1 to ${MAX_PROCESSES_LIMIT}`,
    'Cap the processes and threads the task may have at once, e.g. 256: a fork bomb stays inside it (forks past the cap fail; status counts them in pids_limit_hits).',
  ),
  cpu_limit: field(
    z.number().min(MIN_CPU_LIMIT).max(MAX_CPU_LIMIT).optional(),
    `a number of CPUs from ${MIN_CPU_LIMIT} to ${MAX_CPU_LIMIT}`,
    'CPUs the task may use, e.g. 0.5 or 2: it is slowed, not killed, past it.',
  ),
  sandbox: objectField(
    sandboxSchema.optional(),
    'an object {"write": [absolute directories], "network": true or false}, both members optional',
    'Confine the task, enforced by the kernel for it and everything it starts: {"write": ["/work/repo"]} lets it write only there (reads work everywhere), {"network": false} cuts it off any network but its own loopback. E.g. to try a stranger\'s script: {"write": ["/tmp/try"], "network": false}. Default: the operator\'s (null unless set); refused with ERR_SANDBOX_UNAVAILABLE where this host cannot enforce it, never run less confined. Asked for from inside one of this daemon\'s sandboxed tasks: at most, and by default, that task\'s sandbox. status shows the sandbox in force.',
  ),
  wait_for: waitForField(),
  wait_for_port: waitForPortField(),
  exclusive_port: field(
    z.number().int().min(1).max(65_535).optional(),
    'a TCP port from 1 to 65535',
    'Refuse to start (saying which task or process holds it) when something already listens on this TCP port, e.g. 3000 for a dev server, instead of starting a second one that fails with "address in use".',
  ),
  verbose: verboseField(),
});

/** What an agent reads to decide how to call it. */
const description = (advice: EndAdvice) =>
  [
    `Start \`bash -c COMMAND\` as a background task and return its id. Waits up to wait_seconds (default 3) for it to finish: quick commands come back with their exit code and output at once; ${runEndAdvice(advice)}`,
    'Output streams to files as it is written: the output tool reads it (what is new since the last look, grep, head, tail). Use timeout_seconds for anything that might hang, and kill to stop a task and everything it started.',
    'Use pty only when a program needs a terminal to behave (colour, progress, isatty checks); use interactive only when you must answer it while it runs (a prompt, a REPL), then write with the input tool. Pagers and credential prompts are off by default.',
    'To start a dev server and go on once it is up: {"command": "npm run dev", "name": "web", "wait_for": "ready|listening on", "wait_seconds": 30, "exclusive_port": 3000} returns with wait_result "matched" and the line while the server keeps running; wait_for_port: 3000 instead waits until it listens.',
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
    const { record, waited } = await tasks.runAndWait(request, async (id) =>
      want.pattern === null && want.port === null
        ? (await tasks.waitForEnd(id, input.wait_seconds, options.askable), null)
        : await awaitReadiness(tasks, reads, id, want, input.wait_seconds, clientOf(from, callers)),
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
