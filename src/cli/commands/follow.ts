// follow (logs -f) and logs: a task's output so far, or as it grows until the task ends: one
// stream's bytes as written (from its file where this machine can read it), or the daemon's text
// view of both (the output tool): lines that match --grep, from a --since cursor, within --max-bytes.
import { parseCount, requireIds } from '../arguments.js';
import { EXIT_PIPE, UsageError } from '../cli-error.js';
import { writeJson, type Command, type CommandContext, type OptionValues } from '../command.js';
import { copyExactOutput } from '../exact-output.js';
import { shellExitCode } from '../format.js';
import { fetchOutput, MAX_PAGE_BYTES, showText, STDERR_MARK, tailArgs, type StreamChoice } from '../output-reader.js';
import { fetchStatus, waitForEnd } from '../tasks.js';
import { isFinished } from '../../shared/task-states.js';

const MAX_HISTORY_LINES = 100_000;
const MAX_CONTEXT_LINES = 20;

/** -n: a count of lines, or "all". */
function parseHistory(text: string | undefined, fallback: number): number {
  if (text === 'all') return Number.POSITIVE_INFINITY;
  try {
    return parseCount('-n', text, MAX_HISTORY_LINES, true) ?? fallback;
  } catch {
    throw new UsageError(
      `-n must be a whole number of lines from 0 to ${MAX_HISTORY_LINES}, or all; got ${JSON.stringify(text)}`,
    );
  }
}

/** The output tool's reading fields from the flags. */
function readingArgs(values: OptionValues): { stream: StreamChoice; args: Record<string, unknown> } {
  if (values.stdout && values.stderr)
    throw new UsageError(
      `give --stdout or --stderr, not both (without either, both streams are shown, stderr's lines marked)`,
    );
  if (values.context !== undefined && values.grep === undefined)
    throw new UsageError(
      `-C is taken only with --grep (the lines around each match); got -C ${String(values.context)} without --grep`,
    );
  const stream: StreamChoice = values.stdout ? 'stdout' : values.stderr ? 'stderr' : 'both';
  const args: Record<string, unknown> = { stream };
  if (stream !== 'both') args.raw = true;
  if (values.grep !== undefined) args.grep = values.grep;
  if (values.context !== undefined) args.context = parseCount('-C', values.context as string, MAX_CONTEXT_LINES, true);
  return { stream, args };
}

/** Shows task `id`'s output, following it until the end when `follow`; returns the exit code. */
async function showOutput(
  context: CommandContext,
  values: OptionValues,
  positionals: string[],
  follow: boolean,
  command: string,
): Promise<number> {
  const [id] = requireIds(command, positionals, true) as [string];
  const { stream, args } = readingArgs(values);
  const history = parseHistory(values.lines as string | undefined, follow ? 10 : Number.POSITIVE_INFINITY);
  const maxBytes = parseCount('--max-bytes', values['max-bytes'] as string | undefined, MAX_PAGE_BYTES);
  const since = values.since as string | undefined;
  if (context.json) return showJson(context, id, follow, { ...args, ...tailArgs(history, since), since, maxBytes });
  const exact = stream !== 'both' && args.grep === undefined && maxBytes === undefined && since === undefined;
  const copied = exact && (await copyExactOutput(context, { id, stream, history, follow }));
  if (!copied) await showText(context, id, { stream, args, history, since, maxBytes, follow });
  if (context.stdoutClosed()) {
    // Nobody reads on: the task's code if it has ended, else as a command SIGPIPE ended.
    const status = follow ? await fetchStatus(context.client, id, 0) : null;
    return status !== null && isFinished(status.state) ? shellExitCode(status) : EXIT_PIPE;
  }
  return follow ? shellExitCode(await fetchStatus(context.client, id, 0)) : 0;
}

/** --json: the output answer; with follow, the task's status once it has ended. */
async function showJson(
  context: CommandContext,
  id: string,
  follow: boolean,
  query: Record<string, unknown> & { since: string | undefined; maxBytes: number | undefined },
): Promise<number> {
  if (follow) {
    await waitForEnd(context.client, id, null);
    const shown = await fetchStatus(context.client, id);
    writeJson(context, shown);
    return shellExitCode(shown);
  }
  const { since, maxBytes, ...args } = query;
  writeJson(
    context,
    await fetchOutput(context.client, id, {
      ...args,
      max_bytes: maxBytes ?? MAX_PAGE_BYTES,
      ...(since === undefined ? {} : { since }),
    }),
  );
  return 0;
}

const FLAGS_HELP = [
  '-n N            show the last N lines of each stream first, or all (follow: 10; logs: all)',
  '--stdout        only stdout, its bytes exactly as written (CR, NUL and bytes that are not UTF-8',
  "                too), from its file when this machine can read it, else the daemon's text (warned)",
  '--stderr        only stderr, the same way',
  `Without either: a view to read, not the bytes: both streams by lines, stderr's marked ${STDERR_MARK.trim()} (in`,
  'red on a terminal), without the CR before a newline, U+FFFD for bytes that are not UTF-8; lines',
  'of the two streams that arrive together may appear out of order.',
  '--grep RE       only the lines matching the regular expression RE, numbered as grep -n numbers them',
  `-C N            with --grep, N lines (0 to ${MAX_CONTEXT_LINES}) around each match, as grep -C`,
  "--json          follow: wait for the end and print the task's status (no live output)",
];

export const followCommand: Command = {
  name: 'follow',
  summary: "a task's output as it grows, until it ends; exits with the task's exit code",
  usage: 'hive-bash follow ID [-n N|all] [--stdout | --stderr] [--grep RE [-C N]]',
  help: [
    ...FLAGS_HELP,
    "Exit code: the task's own (128+N after signal N; 1 when it never ran); when stdout's reader goes",
    "away first (follow ID | head -1), the task's if it has ended by then, else 141 (as SIGPIPE).",
  ],
  reportsTask: true,
  options: {
    lines: { type: 'string', short: 'n' },
    stdout: { type: 'boolean' },
    stderr: { type: 'boolean' },
    grep: { type: 'string' },
    context: { type: 'string', short: 'C' },
  },
  run: (context, values, positionals) => showOutput(context, values, positionals, true, 'follow'),
};

export const logsCommand: Command = {
  name: 'logs',
  summary: "a task's output so far; with -f, follow it as follow does",
  usage: 'hive-bash logs [-f] ID [-n N|all] [--stdout | --stderr] [--grep RE [-C N]] [--since CURSOR] [--max-bytes N]',
  help: [
    '-f, --follow    keep printing as the output grows, until the task ends (as follow)',
    ...FLAGS_HELP,
    '--since CURSOR  only what was written after the answer whose next cursor this is (logs --json prints it; a view)',
    `--max-bytes N   at most N bytes (up to ${MAX_PAGE_BYTES}): the beginning and the end, and what was left out between (a view)`,
    "logs --json     the output tool's answer: each stream's text and line numbers, and next, the cursor for --since",
    "Exit code: 0, or 141 when stdout's reader goes away first; with -f, as follow's.",
  ],
  reportsTask: true,
  options: {
    ...followCommand.options,
    follow: { type: 'boolean', short: 'f' },
    since: { type: 'string' },
    'max-bytes': { type: 'string' },
  },
  run: (context, values, positionals) => showOutput(context, values, positionals, values.follow === true, 'logs'),
};
