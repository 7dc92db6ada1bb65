// Runs the real hive-bash binary against a test daemon: to completion, or in the background for
// the commands that follow a task; every child is killed at the end of its test.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { TestContext } from 'node:test';

export const CLI_JS = new URL('../../src/cli/main.js', import.meta.url).pathname;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit and everything printed. */
  done: Promise<CliResult>;
}

/** The environment of the CLI: the runner's without HIVE_* and NO_COLOR, plus `env`. */
function cliEnv(env: Record<string, string>): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('HIVE_') && name !== 'NO_COLOR') clean[name] = value;
  }
  return { ...clean, ...env };
}

/** Starts `hive-bash ARGS` talking to `url` (HIVE_BASH_URL); killed when test `t` ends. */
export function startCli(
  t: TestContext,
  url: string | null,
  args: string[],
  env: Record<string, string> = {},
): RunningCli {
  const child = spawn(process.execPath, [CLI_JS, ...args], {
    env: cliEnv(url === null ? env : { HIVE_BASH_URL: url, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const done = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, stdout: () => stdout, stderr: () => stderr, done };
}

/** Runs `hive-bash ARGS` to its end. */
export function runCli(
  t: TestContext,
  url: string | null,
  args: string[],
  env: Record<string, string> = {},
): Promise<CliResult> {
  return startCli(t, url, args, env).done;
}

/** A command for a task that waits until file `gate` exists (the test opens it when it wants). */
export function awaitGate(gate: string): string {
  return `while [ ! -e ${gate} ]; do sleep 0.05; done`;
}
