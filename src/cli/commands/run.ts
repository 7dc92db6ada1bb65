// run: starts a task (bash -c COMMAND) and prints its id, and its result when it ended within the
// wait; exits with its code then, 124 when the wait ended first (as wait --timeout), 0 with --detach.
import { resolve } from 'node:path';
import { escapeControls } from '../../shared/control-escape.js';
import { isFinished } from '../../shared/task-states.js';
import { parseSeconds } from '../arguments.js';
import { EXIT_OK, EXIT_TIMEOUT, UsageError } from '../cli-error.js';
import { writeJson, type Command } from '../command.js';
import { formatDuration, shellExitCode } from '../format.js';
import { MAX_WAIT_SECONDS, type TaskStatus } from '../tasks.js';

/** --env NAME=VALUE flags as an object. */
function parseEnv(pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
    if (!match)
      throw new UsageError(
        `--env must be NAME=VALUE with a NAME of letters, digits and _ not starting with a digit; got ${JSON.stringify(pair)}`,
      );
    env[match[1]!] = match[2]!;
  }
  return env;
}

/** The result of a task that ended within the wait: its end, then each non-empty tail, controls shown escaped. */
function describeResult(task: TaskStatus): string {
  const exit = task.exit_code === null ? 'no exit code' : `exit ${task.exit_code}`;
  const lines = [
    escapeControls(
      `${task.state}: ${exit}${task.signal ? ` (${task.signal})` : ''} after ${formatDuration(task.runtime_ms)}${task.error ? `: ${task.error}` : ''}`,
    ),
  ];
  for (const stream of ['stdout', 'stderr'] as const) {
    const tail = task[`${stream}_tail`];
    if (tail.length > 0) lines.push(`--- ${stream} ---`, escapeControls(tail.replace(/\n$/, ''), true));
  }
  return `${lines.join('\n')}\n`;
}

export const runCommand: Command = {
  name: 'run',
  summary: "start a task; prints its id, and its result when it ends within the wait; exits with the task's code",
  usage:
    'hive-bash run [--name N] [--wait S | --detach] [--timeout S] [--cwd D] [--env K=V]… [--pty] [--sandbox-write D]… [--no-network] -- COMMAND…',
  help: [
    '--name N        the task id to use instead of a generated one',
    `--wait S        wait up to S seconds (0 to ${MAX_WAIT_SECONDS}; the daemon's default 3) for the result`,
    '-d, --detach    only start it: print its id and exit 0 without waiting (hive-bash wait ID later)',
    '--timeout S     end the task after S seconds (it becomes timed_out)',
    "--cwd D         its working directory (default: this shell's)",
    '--env K=V       add K=V to its environment (repeatable)',
    '--pty           run it on a pseudo-terminal (all its output goes to stdout)',
    '--sandbox-write D  sandbox it: it may write only beneath D (repeatable); everywhere else is read-only to it',
    '--no-network    sandbox it: no network but its own loopback (with no --sandbox-write: writes in its cwd and the temporary directory)',
    'COMMAND… is joined with spaces and run as bash -c; quote it as one word to keep its shell syntax',
    "Prints the id on the first line. Exit code: the task's own when it ended within the wait (128+N",
    'after signal N), 124 when the wait ended first (it runs on; see --detach), 0 with --detach.',
  ],
  reportsTask: true,
  options: {
    name: { type: 'string' },
    wait: { type: 'string' },
    detach: { type: 'boolean', short: 'd' },
    timeout: { type: 'string' },
    cwd: { type: 'string' },
    env: { type: 'string', multiple: true },
    pty: { type: 'boolean' },
    'sandbox-write': { type: 'string', multiple: true },
    'no-network': { type: 'boolean' },
  },
  async run(context, values, positionals) {
    if (positionals.length === 0)
      throw new UsageError('run needs a command after --, e.g. hive-bash run -- make test; got none');
    const detach = values.detach === true;
    if (detach && values.wait !== undefined)
      throw new UsageError(
        `give --detach (start it, do not wait) or --wait S, not both; got --detach and --wait ${String(values.wait)}`,
      );
    const wait = detach
      ? 0
      : parseSeconds('--wait', values.wait as string | undefined, { max: MAX_WAIT_SECONDS, zeroAllowed: true });
    const timeout = parseSeconds('--timeout', values.timeout as string | undefined);
    const env = parseEnv((values.env as string[] | undefined) ?? []);
    const write = (values['sandbox-write'] as string[] | undefined)?.map((dir) => resolve(dir));
    const sandbox =
      write === undefined && !values['no-network']
        ? undefined
        : { ...(write === undefined ? {} : { write }), ...(values['no-network'] ? { network: false } : {}) };
    const task = await context.client.callTool<TaskStatus>('run', {
      command: positionals.join(' '),
      cwd: resolve((values.cwd as string | undefined) ?? process.cwd()),
      verbose: true,
      ...(values.name === undefined ? {} : { name: values.name }),
      ...(wait === undefined ? {} : { wait_seconds: wait }),
      ...(timeout === undefined ? {} : { timeout_seconds: timeout }),
      ...(Object.keys(env).length === 0 ? {} : { env }),
      ...(values.pty ? { pty: true } : {}),
      ...(sandbox === undefined ? {} : { sandbox }),
    });
    const finished = isFinished(task.state) && !detach;
    if (context.json) writeJson(context, task);
    else context.write(`${escapeControls(task.id)}\n${finished ? describeResult(task) : ''}`);
    if (detach) return EXIT_OK;
    if (finished) return shellExitCode(task);
    if (!context.json)
      context.warn(`${task.id} still ${task.state} when the wait ended; hive-bash wait ${task.id} waits for its end`);
    return EXIT_TIMEOUT;
  },
};
