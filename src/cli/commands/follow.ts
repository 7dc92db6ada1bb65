// follow (logs -f) and logs: a task's output as it grows, read from its files, until the task ends.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseCount, requireIds } from '../arguments.js';
import { UsageError } from '../cli-error.js';
import { writeJson, type Command, type CommandContext, type OptionValues } from '../command.js';
import { shellExitCode } from '../format.js';
import { findLastLines, OutputFile } from '../output-files.js';
import { fetchStatus, waitForEnd, type TaskStatus } from '../tasks.js';

/** How often the files are read for what was appended; they are local, so this is cheap. */
const READ_INTERVAL_MS = 100;
const STDERR_MARK = '[stderr] ';
const MAX_HISTORY_LINES = 1_000_000;

/** -n: a count of lines, or "all". */
function parseHistory(text: string | undefined, fallback: number): number {
  if (text === 'all') return Number.POSITIVE_INFINITY;
  try {
    return parseCount('-n', text, MAX_HISTORY_LINES, true) ?? fallback;
  } catch {
    throw new UsageError(`-n must be a whole number of lines from 0 to ${MAX_HISTORY_LINES}, or all; got ${JSON.stringify(text)}`);
  }
}

/** Writes what each file gained: one stream as raw bytes, both as lines with stderr's marked. */
function createPump(context: CommandContext, task: TaskStatus, values: OptionValues, history: number) {
  const only = values.stdout ? 'stdout' : values.stderr ? 'stderr' : null;
  const open = (stream: 'stdout' | 'stderr') => {
    const path = task[`${stream}_path`];
    return new OutputFile(path, history === Number.POSITIVE_INFINITY ? 0 : findLastLines(path, history));
  };
  if (only !== null) {
    const file = open(only);
    return (_flush: boolean) => {
      const bytes = file.readBytes();
      if (bytes.length > 0) process.stdout.write(bytes);
    };
  }
  const stdout = open('stdout');
  const stderr = open('stderr');
  const mark = (line: string) => context.paint('red', `${STDERR_MARK}${line}`);
  return (flush: boolean) => {
    for (const line of stdout.readLines(flush)) context.write(`${line}\n`);
    for (const line of stderr.readLines(flush)) context.write(`${mark(line)}\n`);
  };
}

/** Shows task `id`'s output, following it until the end when `follow`; returns the exit code. */
async function showOutput(context: CommandContext, values: OptionValues, positionals: string[], follow: boolean, command: string): Promise<number> {
  const [id] = requireIds(command, positionals, true);
  if (values.stdout && values.stderr) throw new UsageError(`give --stdout or --stderr, not both (without either, both streams are shown, stderr's lines marked)`);
  const history = parseHistory(values.lines as string | undefined, follow ? 10 : Number.POSITIVE_INFINITY);
  if (context.json) {
    if (follow) await waitForEnd(context.client, id!, null);
    const shown = await fetchStatus(context.client, id!);
    writeJson(context, shown);
    return follow ? shellExitCode(shown) : 0;
  }
  const task = await fetchStatus(context.client, id!, 0);
  const pump = createPump(context, task, values, history);
  if (!follow) {
    pump(true);
    return 0;
  }
  let ended: TaskStatus | null = null;
  let failure: unknown = null;
  const end = waitForEnd(context.client, id!, null).then(
    (status) => void (ended = status),
    (error) => void (failure = error),
  );
  while (ended === null && failure === null) {
    pump(false);
    await Promise.race([end, sleep(READ_INTERVAL_MS)]);
  }
  pump(true);
  if (failure !== null) throw failure;
  return shellExitCode(ended!);
}

const FLAGS_HELP = [
  '-n N            show the last N lines of each stream first, or all (follow: 10; logs: all)',
  '--stdout        only stdout, as written (no marks)',
  '--stderr        only stderr, as written (no marks)',
  `Without either, both streams are shown, stdout's lines as written and stderr's marked ${STDERR_MARK.trim()}`,
  '(in red on a terminal); lines of the two streams that arrive together may appear out of order.',
  '--json          wait for the end and print the task\'s status (no live output)',
];

export const followCommand: Command = {
  name: 'follow',
  summary: "a task's output as it grows, until it ends; exits with the task's exit code",
  usage: 'hive-bash follow ID [-n N|all] [--stdout | --stderr]',
  help: [...FLAGS_HELP, "Exit code: the task's own (128+N after signal N; 1 when it never ran)."],
  options: { lines: { type: 'string', short: 'n' }, stdout: { type: 'boolean' }, stderr: { type: 'boolean' } },
  run: (context, values, positionals) => showOutput(context, values, positionals, true, 'follow'),
};

export const logsCommand: Command = {
  name: 'logs',
  summary: "a task's output so far; with -f, follow it as follow does",
  usage: 'hive-bash logs [-f] ID [-n N|all] [--stdout | --stderr]',
  help: ['-f, --follow    keep printing as the output grows, until the task ends (as follow)', ...FLAGS_HELP, "Exit code: 0; with -f, the task's own."],
  options: { ...followCommand.options, follow: { type: 'boolean', short: 'f' } },
  run: (context, values, positionals) => showOutput(context, values, positionals, values.follow === true, 'logs'),
};
