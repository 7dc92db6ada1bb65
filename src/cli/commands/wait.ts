// wait: blocks until every task named has ended (or printed a match of --until), as a shell's wait
// and timeout(1) do: the first non-zero exit code, 124 when --timeout passes first.
import { parseSeconds, requireIds } from '../arguments.js';
import { CliError, EXIT_TIMEOUT, UsageError } from '../cli-error.js';
import type { DaemonClient } from '../client.js';
import { writeJson, type Command } from '../command.js';
import { formatDuration, shellExitCode } from '../format.js';
import { escapeControls } from '../../shared/control-escape.js';
import { isFinished } from '../../shared/task-states.js';
import { MAX_WAIT_SECONDS, waitForEnd, type TaskStatus } from '../tasks.js';

interface Outcome {
  id: string;
  /** ended: it finished; matched: its output matched --until; timeout: neither before --timeout. */
  outcome: 'ended' | 'matched' | 'timeout';
  state: string;
  exit_code: number | null;
  signal: string | null;
  runtime_ms: number | null;
  matched_line: string | null;
}

function outcomeOf(status: TaskStatus, outcome: Outcome['outcome'], matchedLine: string | null = null): Outcome {
  const { id, state, exit_code, signal, runtime_ms } = status;
  return { id, outcome, state, exit_code, signal, runtime_ms, matched_line: matchedLine };
}

/**
 * Waits for task `id` to print a line matching `pattern` or to end, or for the deadline: status
 * with wait_for, so the daemon matches (on its linear-time engine) as the output is written.
 */
async function waitForMatch(
  client: DaemonClient,
  id: string,
  pattern: string,
  deadline: number | null,
): Promise<Outcome> {
  for (;;) {
    const left = deadline === null ? MAX_WAIT_SECONDS : Math.max(0, (deadline - Date.now()) / 1000);
    let status: TaskStatus & { wait_result?: string; matched_line?: string | null };
    try {
      status = await client.callTool('status', {
        id,
        peek: true,
        verbose: true,
        wait_for: pattern,
        wait_seconds: Math.min(MAX_WAIT_SECONDS, Math.round(left * 1000) / 1000),
        tail_bytes: 0,
      });
    } catch (error) {
      if (error instanceof CliError && (error.code === 'ERR_INVALID_INPUT' || error.code === 'ERR_PATTERN_TOO_COSTLY'))
        throw new UsageError(`--until ${error.message.replace(/^.*"wait_for" /, '')}`);
      throw error;
    }
    if (status.wait_result === 'matched') return outcomeOf(status, 'matched', status.matched_line ?? null);
    if (status.wait_result === 'ended' || isFinished(status.state)) return outcomeOf(status, 'ended');
    if (deadline !== null && Date.now() >= deadline) return outcomeOf(status, 'timeout');
  }
}

async function waitForTask(client: DaemonClient, id: string, deadline: number | null): Promise<Outcome> {
  const status = await waitForEnd(client, id, deadline);
  return outcomeOf(status, isFinished(status.state) ? 'ended' : 'timeout');
}

/** The exit code an outcome stands for: 0 for a match, else the task's own (1 for a success that never matched). */
function exitCodeOf(outcome: Outcome, until: boolean): number {
  if (outcome.outcome === 'matched') return 0;
  const code = shellExitCode(outcome);
  return until && code === 0 ? 1 : code;
}

function describeOutcome(outcome: Outcome, pattern: string | null): string {
  if (outcome.outcome === 'matched') return `${outcome.id} matched /${pattern}/: ${outcome.matched_line}`;
  if (outcome.outcome === 'timeout') return `${outcome.id} still ${outcome.state}`;
  const exit = outcome.exit_code === null ? 'no exit code' : `exit ${outcome.exit_code}`;
  const tail = pattern ? `, without a line matching /${pattern}/` : '';
  return `${outcome.id} ${outcome.state}: ${exit}${outcome.signal ? ` (${outcome.signal})` : ''} after ${formatDuration(outcome.runtime_ms)}${tail}`;
}

export const waitCommand: Command = {
  name: 'wait',
  summary: 'block until the tasks end (or print a match); exits with the first non-zero exit code',
  usage: 'hive-bash wait ID… [--timeout S] [--until REGEX]',
  help: [
    '--timeout S     give up after S seconds and exit with 124 (as timeout(1))',
    "--until REGEX   return as soon as each task's output has a line matching REGEX (a JavaScript",
    '                regular expression without backreferences or lookaround, matched by the daemon',
    '                in linear time), e.g. "listening on", without waiting for the end; a task',
    '                that ends without one counts with its exit code, or 1 if that was 0',
    'Exit code: the first non-zero exit code of the tasks, in the order named (128+N after signal N;',
    '1 for a task that never ran), 0 when all succeeded or matched, 124 when the timeout passed first.',
  ],
  reportsTask: true,
  options: { timeout: { type: 'string' }, until: { type: 'string' } },
  async run(context, values, positionals) {
    const ids = requireIds('wait', positionals);
    const seconds = parseSeconds('--timeout', values.timeout as string | undefined);
    const pattern = (values.until as string | undefined) ?? null;
    const deadline = seconds === undefined ? null : Date.now() + seconds * 1000;
    const outcomes = await Promise.all(
      ids.map((id) =>
        pattern !== null
          ? waitForMatch(context.client, id, pattern, deadline)
          : waitForTask(context.client, id, deadline),
      ),
    );
    const timedOut = outcomes.some((outcome) => outcome.outcome === 'timeout');
    const exitCode = timedOut
      ? EXIT_TIMEOUT
      : (outcomes.map((outcome) => exitCodeOf(outcome, pattern !== null)).find((code) => code !== 0) ?? 0);
    if (context.json) {
      writeJson(context, { tasks: outcomes, timed_out: timedOut, exit_code: exitCode });
    } else {
      context.write(outcomes.map((outcome) => `${escapeControls(describeOutcome(outcome, pattern))}\n`).join(''));
      if (timedOut)
        context.warn(
          `--timeout ${String(values.timeout)} s passed first; still going: ${outcomes
            .filter((o) => o.outcome === 'timeout')
            .map((o) => o.id)
            .join(', ')}`,
        );
    }
    return exitCode;
  },
};
