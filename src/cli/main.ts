#!/usr/bin/env node
// hive-bash: the operator's command line, speaking MCP to a running hive-bash-daemon.
import { parseArgs } from 'node:util';
import { CliError, EXIT_ERROR, EXIT_OK, EXIT_PIPE, EXIT_USAGE, UsageError } from './cli-error.js';
import { DaemonClient, DEFAULT_URL } from './client.js';
import type { Command, CommandContext, OptionSpec } from './command.js';
import { COMMANDS, findCommand } from './commands/index.js';
import { createPaint } from './format.js';
import { escapeControls } from '../shared/control-escape.js';
import { CliStdout } from './stdout.js';

const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  url: { type: 'string' },
  'token-file': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};
const GLOBAL_HELP = [
  `--url URL          the daemon's MCP endpoint (HIVE_BASH_URL; default ${DEFAULT_URL})`,
  '--token-file FILE  send Authorization: Bearer with the token in FILE (HIVE_BASH_TOKEN_FILE)',
  "--json             one JSON document on stdout, with the fields of the daemon's tools",
  "-h, --help         this help; hive-bash COMMAND --help for a command's",
];
const EXIT_HELP = [
  "0    success; where a command reports a task (run, wait, follow, logs -f): the task's own exit",
  '     code (128+N after signal N)',
  '1    an error (an unknown id, a refused call, a wrong token, a failed write to stdout)',
  '2    a usage error (an unknown flag, a bad value)',
  '3    the daemon cannot be reached',
  "124  wait --timeout passed first; run's wait ended before the task (not with --detach)",
  "141  stdout's reader went away first (as a command ended by SIGPIPE); run and wait keep their",
  "     code, and follow (logs -f) the task's when it has ended",
];

/** Splits off the command's name: the first word that is not a global flag or its value. */
function splitCommand(argv: string[]): { name: string | null; rest: string[] } {
  for (let index = 0; index < argv.length; index++) {
    const token = argv[index]!;
    if (token === '--') break;
    if (token === '--url' || token === '--token-file') index++;
    else if (!token.startsWith('-')) return { name: token, rest: [...argv.slice(0, index), ...argv.slice(index + 1)] };
  }
  return { name: null, rest: argv };
}

function formatMainHelp(): string {
  const width = Math.max(
    ...COMMANDS.map((command) => command.name.length + (command.aliases ? command.aliases.join(', ').length + 3 : 0)),
  );
  const lines = COMMANDS.map((command) => {
    const names = command.aliases ? `${command.name} (${command.aliases.join(', ')})` : command.name;
    return `  ${names.padEnd(width)}  ${command.summary}`;
  });
  return [
    'Usage: hive-bash [--url URL] [--token-file FILE] [--json] COMMAND [ARGS…]',
    '',
    'See and control the tasks of a running hive-bash-daemon.',
    '',
    'Commands:',
    ...lines,
    '',
    'Global flags (before or after the command):',
    ...GLOBAL_HELP.map((line) => `  ${line}`),
    '',
    'Exit codes:',
    ...EXIT_HELP.map((line) => `  ${line}`),
    '',
    'Colour only on a terminal and never with NO_COLOR set.',
  ].join('\n');
}

function formatCommandHelp(command: Command): string {
  const names = command.aliases ? ` (alias: ${command.aliases.join(', ')})` : '';
  return [
    `Usage: ${command.usage}${names}`,
    '',
    command.summary,
    '',
    'Flags:',
    ...command.help.map((line) => `  ${line}`),
    '',
    'Global flags:',
    ...GLOBAL_HELP.map((line) => `  ${line}`),
    '',
    'Exit codes:',
    ...EXIT_HELP.map((line) => `  ${line}`),
  ].join('\n');
}

/** parseArgs' complaint, told by its code, as one line that says where the accepted flags are listed. */
function usageErrorOf(error: NodeJS.ErrnoException, command: Command): UsageError {
  const flag = /'(-[^']*)'/.exec(error.message)?.[1];
  const first = error.message.split('. ')[0]!;
  const message =
    error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && flag
      ? `unknown flag ${flag}`
      : error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && flag
        ? `flag ${flag}${first.slice(first.indexOf(flag) + flag.length + 1)}`
        : first;
  return new UsageError(
    `${message}; hive-bash ${command.name} --help lists what it accepts${command.name === 'run' ? ' (put the command after --)' : ''}`,
  );
}

/** The command being run, for the prefix of its error line. */
let running: Command | null = null;
const stdout = new CliStdout();
// A closed stderr leaves nowhere to report anything: its write errors are dropped.
process.stderr.on('error', () => {});

async function main(argv: string[]): Promise<number> {
  const { name, rest } = splitCommand(argv);
  if (name === null || name === 'help') {
    const topic = name === 'help' ? findCommand(rest.find((token) => !token.startsWith('-')) ?? '') : null;
    stdout.write(`${topic ? formatCommandHelp(topic) : formatMainHelp()}\n`);
    if (name === null && !rest.includes('--help') && !rest.includes('-h')) return EXIT_USAGE;
    return EXIT_OK;
  }
  const command = findCommand(name);
  if (!command)
    throw new UsageError(
      `unknown command ${JSON.stringify(name)}; the commands are ${COMMANDS.map((c) => c.name).join(', ')} (hive-bash --help)`,
    );
  running = command;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      options: { ...GLOBAL_OPTIONS, ...command.options },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw usageErrorOf(error as NodeJS.ErrnoException, command);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    stdout.write(`${formatCommandHelp(command)}\n`);
    return EXIT_OK;
  }
  const client = new DaemonClient({
    url: (values.url as string | undefined) ?? process.env.HIVE_BASH_URL ?? DEFAULT_URL,
    tokenFile: (values['token-file'] as string | undefined) ?? process.env.HIVE_BASH_TOKEN_FILE ?? null,
  });
  const terminal = process.stdout.isTTY === true;
  const context: CommandContext = {
    client,
    json: values.json === true,
    paint: createPaint(terminal && !process.env.NO_COLOR),
    width: terminal ? (process.stdout.columns ?? 80) : null,
    terminal: terminal && process.stdin.isTTY === true,
    write: (chunk) => stdout.write(chunk),
    drain: () => stdout.drain(),
    stdoutClosed: () => stdout.closed,
    warn: (text) => void process.stderr.write(`hive-bash ${command.name}: ${escapeControls(text)}\n`),
  };
  try {
    return await command.run(context, values, positionals);
  } finally {
    await client.close();
  }
}

/** The prefix of an error line: the command's name once it is known. */
function errorPrefix(): string {
  return running === null ? 'hive-bash' : `hive-bash ${running.name}`;
}

/** The exit code once stdout is written out: a failed write changes a success into 141 (EPIPE) or 1. */
function exitCodeAfterWriting(code: number): number {
  const failure = stdout.failure;
  if (failure === null) return code;
  if (failure.code !== 'EPIPE') {
    process.stderr.write(`${errorPrefix()}: cannot write to stdout: ${failure.message}\n`);
    return EXIT_ERROR;
  }
  return running?.reportsTask || code !== EXIT_OK ? code : EXIT_PIPE;
}

let code: number;
try {
  code = await main(process.argv.slice(2));
} catch (error) {
  const known = error instanceof CliError;
  process.stderr.write(
    `${errorPrefix()}: ${escapeControls(known ? error.message : `internal error: ${(error as Error).message ?? String(error)}`)}\n`,
  );
  code = known ? error.exitCode : EXIT_ERROR;
}
// Everything written reaches the reader before the exit (a pipe takes it as fast as it is read).
await stdout.drain();
process.exitCode = exitCodeAfterWriting(code);
process.exit();
