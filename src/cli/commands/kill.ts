// kill: ends tasks and everything they started (named, or --all of a state), printing what it signalled.
import { escapeControls } from '../../shared/control-escape.js';
import { KILL_SIGNALS } from '../../shared/signals.js';
import { TASK_STATES, type TaskState } from '../../shared/task-states.js';
import { parseChoice } from '../arguments.js';
import { CliError, UsageError } from '../cli-error.js';
import type { DaemonClient } from '../client.js';
import { writeJson, type Command } from '../command.js';
import { parseSignalName } from '../format.js';
import type { TaskItem } from '../tasks.js';

const MAX_LIST = 1000;

interface KillResult {
  id: string;
  state: string;
  signal: string | null;
  message: string;
}

/** The ids of the tasks in `states` (pending and running by default), newest first. */
async function listIds(client: DaemonClient, states: TaskState[]): Promise<string[]> {
  const lists = await Promise.all(
    states.map((state) => client.callTool<{ tasks: TaskItem[] }>('list', { state, limit: MAX_LIST })),
  );
  return lists.flatMap((list) => list.tasks.map((task) => task.id));
}

export const killCommand: Command = {
  name: 'kill',
  summary: 'end tasks and everything they started',
  usage: 'hive-bash kill ID… [--force] [--signal NAME] | hive-bash kill --all [--state STATE]',
  help: [
    `--signal NAME   the first signal instead of SIGINT: ${KILL_SIGNALS.join(', ')} (TERM or 15 also do)`,
    '--force         SIGKILL at once',
    '--all           every pending and running task (a runaway fleet)',
    `--state STATE   with --all: only tasks in STATE (${TASK_STATES.join(', ')})`,
    "Whatever is still alive after the daemon's grace period (--kill-grace-ms) gets SIGKILL.",
    'kill returns at once; hive-bash wait ID waits for the end. Exit code 1 if any kill was refused.',
  ],
  options: {
    force: { type: 'boolean' },
    signal: { type: 'string' },
    all: { type: 'boolean' },
    state: { type: 'string' },
  },
  async run(context, values, positionals) {
    const state = parseChoice('--state', values.state as string | undefined, TASK_STATES);
    if (values.all && positionals.length > 0)
      throw new UsageError(`give task ids or --all, not both; got --all and ${positionals.join(' ')}`);
    if (state && !values.all)
      throw new UsageError('--state chooses the tasks of --all; give --all too, or task ids alone');
    if (!values.all && positionals.length === 0)
      throw new UsageError('give task ids (hive-bash list shows them) or --all; got neither');
    const signalText = values.signal as string | undefined;
    const signal = signalText === undefined ? undefined : parseSignalName(signalText);
    if (signal === null)
      throw new UsageError(`--signal must be one of ${KILL_SIGNALS.join(', ')}; got ${JSON.stringify(signalText)}`);
    const ids = values.all ? await listIds(context.client, state ? [state] : ['pending', 'running']) : positionals;
    const results: KillResult[] = [];
    const errors: Array<{ id: string; code: string | null; message: string }> = [];
    for (const id of ids) {
      try {
        results.push(
          await context.client.callTool<KillResult>('kill', {
            id,
            ...(values.force ? { force: true } : {}),
            ...(signal ? { signal } : {}),
          }),
        );
      } catch (error) {
        if (!(error instanceof CliError) || error.code === null) throw error;
        errors.push({ id, code: error.code, message: error.message });
      }
    }
    if (context.json) {
      writeJson(context, { results, errors });
    } else {
      if (ids.length === 0) context.write(`no ${state ?? 'pending or running'} tasks to kill\n`);
      for (const result of results) context.write(`${escapeControls(result.message)}\n`);
      for (const error of errors) context.warn(error.message);
    }
    return errors.length > 0 ? 1 : 0;
  },
};
