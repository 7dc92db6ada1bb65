// follow (logs -f) and logs: a task's output so far, or as it grows until the task ends, read
// through the daemon's output tool: lines that match --grep, from a --since cursor, within --max-bytes.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseCount, requireIds } from '../arguments.js';
import { UsageError } from '../cli-error.js';
import { writeJson, type Command, type CommandContext, type OptionValues } from '../command.js';
import { shellExitCode } from '../format.js';
import {
  fetchOutput,
  fetchWholePage,
  isEmpty,
  MAX_PAGE_BYTES,
  OutputPrinter,
  STDERR_MARK,
  type OutputAnswer,
  type StreamChoice,
} from '../output-reader.js';
import { fetchStatus, waitForEnd } from '../tasks.js';
import { isFinished, type TaskState } from '../../supervisor/model/task.js';

const MAX_HISTORY_LINES = 100_000;
const MAX_CONTEXT_LINES = 20;
/** After the task's end: how long to wait for the last of its output (a terminal's is read to its end after it). */
const SETTLE_MS = 200;

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
  let next = values.since as string | undefined;
  const tail = Number.isFinite(history) && next === undefined ? { tail: Math.max(1, history) } : {};
  if (context.json) {
    if (follow) {
      await waitForEnd(context.client, id, null);
      const shown = await fetchStatus(context.client, id);
      writeJson(context, shown);
      return shellExitCode(shown);
    }
    writeJson(
      context,
      await fetchOutput(context.client, id, {
        ...args,
        ...tail,
        max_bytes: maxBytes ?? MAX_PAGE_BYTES,
        ...(next === undefined ? {} : { since: next }),
      }),
    );
    return 0;
  }
  const printer = new OutputPrinter(context, stream);
  const show = (answer: OutputAnswer) => {
    if (history !== 0 || next !== undefined) printer.print(answer);
    next = answer.next;
    return answer;
  };
  if (maxBytes !== undefined || 'tail' in tail) {
    show(
      await fetchOutput(context.client, id, {
        ...args,
        ...tail,
        max_bytes: maxBytes ?? MAX_PAGE_BYTES,
        ...(next === undefined ? {} : { since: next }),
      }),
    );
  } else {
    while (
      !isEmpty(
        show(await fetchWholePage(context.client, id, { ...args, ...(next === undefined ? {} : { since: next }) })),
      )
    );
  }
  if (!follow) {
    printer.flush();
    return 0;
  }
  await followToEnd(
    context,
    id,
    args,
    printer,
    () => next!,
    (cursor) => (next = cursor),
  );
  printer.flush();
  return shellExitCode(await fetchStatus(context.client, id, 0));
}

/** Prints what comes after the cursor until the task has ended and its output is all read. */
async function followToEnd(
  context: CommandContext,
  id: string,
  args: Record<string, unknown>,
  printer: OutputPrinter,
  cursor: () => string,
  advance: (next: string) => void,
): Promise<void> {
  let settled = false;
  for (;;) {
    const answer = await fetchWholePage(context.client, id, { ...args, since: cursor(), wait_seconds: 30 });
    printer.print(answer);
    advance(answer.next);
    if (!isFinished(answer.state as TaskState) || !isEmpty(answer)) continue;
    // Ended, and nothing new: done once all of it is in (a lingering process may hold it open: then once more).
    if (answer.complete === true || settled) return;
    settled = true;
    await sleep(SETTLE_MS);
  }
}

const FLAGS_HELP = [
  '-n N            show the last N lines of each stream first, or all (follow: 10; logs: all)',
  '--stdout        only stdout, as written (no marks)',
  '--stderr        only stderr, as written (no marks)',
  `Without either, both streams are shown, stdout's lines as written and stderr's marked ${STDERR_MARK.trim()}`,
  '(in red on a terminal); lines of the two streams that arrive together may appear out of order.',
  '--grep RE       only the lines matching the regular expression RE, numbered as grep -n numbers them',
  `-C N            with --grep, N lines (0 to ${MAX_CONTEXT_LINES}) around each match, as grep -C`,
  "--json          follow: wait for the end and print the task's status (no live output)",
];

export const followCommand: Command = {
  name: 'follow',
  summary: "a task's output as it grows, until it ends; exits with the task's exit code",
  usage: 'hive-bash follow ID [-n N|all] [--stdout | --stderr] [--grep RE [-C N]]',
  help: [...FLAGS_HELP, "Exit code: the task's own (128+N after signal N; 1 when it never ran)."],
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
    '--since CURSOR  only what was written after the answer whose next cursor this is (logs --json prints it)',
    `--max-bytes N   at most N bytes (up to ${MAX_PAGE_BYTES}): the beginning and the end, and what was left out between`,
    "logs --json     the output tool's answer: each stream's text and line numbers, and next, the cursor for --since",
    "Exit code: 0; with -f, the task's own.",
  ],
  options: {
    ...followCommand.options,
    follow: { type: 'boolean', short: 'f' },
    since: { type: 'string' },
    'max-bytes': { type: 'string' },
  },
  run: (context, values, positionals) => showOutput(context, values, positionals, values.follow === true, 'logs'),
};
