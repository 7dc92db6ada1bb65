// What every hive-bash command is: its name, help and flags, and what it does given a context.
import type { DaemonClient } from './client.js';
import type { Paint } from './format.js';

export type OptionSpec = { type: 'string' | 'boolean'; short?: string; multiple?: boolean };
export type OptionValues = Record<string, string | boolean | Array<string | boolean> | undefined>;

export interface CommandContext {
  client: DaemonClient;
  /** --json: one JSON document on stdout, the tools' fields. */
  json: boolean;
  paint: Paint;
  /** The terminal's width when stdout is one, else null (nothing is cut). */
  width: number | null;
  /** stdin and stdout are a terminal, so a live view may take keys. */
  terminal: boolean;
  write(text: string): void;
  /** One line on stderr. */
  warn(text: string): void;
}

export interface Command {
  name: string;
  aliases?: string[];
  /** One line for `hive-bash --help`. */
  summary: string;
  /** e.g. "hive-bash kill ID… [--force] [--signal NAME]" */
  usage: string;
  /** The command's flags and its exit codes, a line each, for `--help`. */
  help: string[];
  options: Record<string, OptionSpec>;
  /** Returns the exit code. */
  run(context: CommandContext, values: OptionValues, positionals: string[]): Promise<number>;
}

/** The whole document as --json prints it. */
export function writeJson(context: CommandContext, value: unknown): void {
  context.write(`${JSON.stringify(value, null, 2)}\n`);
}
