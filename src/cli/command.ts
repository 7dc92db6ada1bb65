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
  /** Queues text (as UTF-8) or bytes (as they are) on stdout; nothing once its reader has gone. */
  write(chunk: string | Uint8Array): void;
  /** Waits until the reader has taken what was written (or has gone): call it between large writes. */
  drain(): Promise<void>;
  /** stdout's reader has gone (EPIPE) or a write failed: nothing more will be shown. */
  stdoutClosed(): boolean;
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
  /**
   * Its exit code reports a task's (run, wait, follow): when stdout closes early the command
   * chooses its code itself; any other command then exits 141.
   */
  reportsTask?: boolean;
  /** Returns the exit code. */
  run(context: CommandContext, values: OptionValues, positionals: string[]): Promise<number>;
}

/** The whole document as --json prints it. */
export function writeJson(context: CommandContext, value: unknown): void {
  context.write(`${JSON.stringify(value, null, 2)}\n`);
}
