// Runs the real hive-bash binary against a test daemon: to completion, in the background for the
// commands that follow a task, or in a shell's pipeline; every child's process group is killed at
// the end of its test.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  /** stdout's bytes as they came, once it has ended. */
  stdoutBytes: Promise<Buffer>;
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
  return startChild(t, process.execPath, [CLI_JS, ...args], url === null ? env : { HIVE_BASH_URL: url, ...env });
}

/**
 * Runs `bash -c SCRIPT`, in which the function hive-bash runs the CLI talking to `url`: for
 * pipelines, such as `hive-bash follow ID | head -n 1`.
 */
export function runShell(t: TestContext, url: string, script: string): Promise<CliResult> {
  const define = 'hive-bash() { "$HIVE_TEST_NODE" "$HIVE_TEST_CLI" "$@"; }';
  return startChild(t, 'bash', ['-c', `${define}\n${script}`], {
    HIVE_BASH_URL: url,
    HIVE_TEST_NODE: process.execPath,
    HIVE_TEST_CLI: CLI_JS,
  }).done;
}

function startChild(t: TestContext, file: string, args: string[], env: Record<string, string>): RunningCli {
  // A group of its own, so that a shell's pipeline is killed with it.
  const child = spawn(file, args, { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const chunks: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const stdout = () => Buffer.concat(chunks).toString('utf8');
  const done = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout: stdout(), stderr }));
  t.after(() => {
    // While its leader is unreaped, the group's id cannot have been reused.
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  });
  return { child, stdout, stderr: () => stderr, done, stdoutBytes: done.then(() => Buffer.concat(chunks)) };
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

/** A gate's path in a folder of its own, for tasks that wait on it: opened and removed when `t` ends. */
export function makeGate(t: TestContext): string {
  const gates = mkdtempSync(join(tmpdir(), 'hive-bash-cli-'));
  const gate = join(gates, 'open');
  t.after(() => {
    writeFileSync(gate, '');
    rmSync(gates, { recursive: true, force: true });
  });
  return gate;
}
