// wait: blocks until every task named has ended (or printed a match of --until), as a shell's wait
// and timeout(1) do: the first non-zero exit code, 124 when --timeout passes first.
import { setTimeout as sleep } from 'node:timers/promises';
import { parseSeconds, requireIds } from '../arguments.js';
import { EXIT_TIMEOUT, UsageError } from '../cli-error.js';
import type { DaemonClient } from '../client.js';
import { writeJson, type Command } from '../command.js';
import { formatDuration, shellExitCode } from '../format.js';
import { OutputFile } from '../output-files.js';
import { isFinished } from '../../supervisor/model/task.js';
import { fetchStatus, waitForEnd, type TaskStatus } from '../tasks.js';

const READ_INTERVAL_MS = 100;

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

/** The first line of either stream (whole or still being written) that matches `pattern`, or null. */
function findMatch(files: OutputFile[], pattern: RegExp, flush: boolean): string | null {
  for (const file of files) {
    const line = [...file.readLines(flush), file.pendingLine].find((candidate) => pattern.test(candidate));
    if (line !== undefined) return line;
  }
  return null;
}

/** Waits for task `id` to print a line matching `pattern` or to end, or for the deadline. */
async function waitForMatch(client: DaemonClient, id: string, pattern: RegExp, deadline: number | null): Promise<Outcome> {
  const first = await fetchStatus(client, id, 0);
  const files = [new OutputFile(first.stdout_path, 0), new OutputFile(first.stderr_path, 0)];
  let ended: TaskStatus | null = null;
  let failure: unknown = null;
  const end = waitForEnd(client, id, deadline).then(
    (status) => void (ended = status),
    (error) => void (failure = error),
  );
  for (;;) {
    const done = ended as TaskStatus | null;
    const line = findMatch(files, pattern, done !== null);
    if (line !== null) return outcomeOf(done ?? first, 'matched', line);
    if (failure !== null) throw failure;
    if (done !== null) return outcomeOf(done, isFinished(done.state) ? 'ended' : 'timeout');
    await Promise.race([end, sleep(READ_INTERVAL_MS)]);
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

function describeOutcome(outcome: Outcome, pattern: RegExp | null): string {
  if (outcome.outcome === 'matched') return `${outcome.id} matched /${pattern!.source}/: ${outcome.matched_line}`;
  if (outcome.outcome === 'timeout') return `${outcome.id} still ${outcome.state}`;
  const exit = outcome.exit_code === null ? 'no exit code' : `exit ${outcome.exit_code}`;
  const tail = pattern ? `, without a line matching /${pattern.source}/` : '';
  return `${outcome.id} ${outcome.state}: ${exit}${outcome.signal ? ` (${outcome.signal})` : ''} after ${formatDuration(outcome.runtime_ms)}${tail}`;
}

export const waitCommand: Command = {
  name: 'wait',
  summary: 'block until the tasks end (or print a match); exits with the first non-zero exit code',
  usage: 'hive-bash wait ID… [--timeout S] [--until REGEX]',
  help: [
    '--timeout S     give up after S seconds and exit with 124 (as timeout(1))',
    "--until REGEX   return as soon as each task's output has a line matching REGEX (a JavaScript",
    '                regular expression), e.g. "listening on", without waiting for the end; a task',
    '                that ends without one counts with its exit code, or 1 if that was 0',
    'Exit code: the first non-zero exit code of the tasks, in the order named (128+N after signal N;',
    '1 for a task that never ran), 0 when all succeeded or matched, 124 when the timeout passed first.',
  ],
  options: { timeout: { type: 'string' }, until: { type: 'string' } },
  async run(context, values, positionals) {
    const ids = requireIds('wait', positionals);
    const seconds = parseSeconds('--timeout', values.timeout as string | undefined);
    let pattern: RegExp | null = null;
    if (values.until !== undefined) {
      try {
        pattern = new RegExp(values.until as string);
      } catch (error) {
        throw new UsageError(`--until must be a JavaScript regular expression; got ${JSON.stringify(values.until)}: ${(error as Error).message}`);
      }
    }
    const deadline = seconds === undefined ? null : Date.now() + seconds * 1000;
    const outcomes = await Promise.all(ids.map((id) => (pattern ? waitForMatch(context.client, id, pattern, deadline) : waitForTask(context.client, id, deadline))));
    const timedOut = outcomes.some((outcome) => outcome.outcome === 'timeout');
    const exitCode = timedOut ? EXIT_TIMEOUT : (outcomes.map((outcome) => exitCodeOf(outcome, pattern !== null)).find((code) => code !== 0) ?? 0);
    if (context.json) {
      writeJson(context, { tasks: outcomes, timed_out: timedOut, exit_code: exitCode });
    } else {
      context.write(outcomes.map((outcome) => `${describeOutcome(outcome, pattern)}\n`).join(''));
      if (timedOut) context.warn(`--timeout ${values.timeout} s passed first; still going: ${outcomes.filter((o) => o.outcome === 'timeout').map((o) => o.id).join(', ')}`);
    }
    return exitCode;
  },
};
