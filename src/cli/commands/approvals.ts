// approvals, approve, deny: the execs that wait for a person under the daemon's command policy, and
// the operator's answer to each (GET /approvals, POST /approvals/ID/approve or /deny).
import { writeJson, type Command, type CommandContext } from '../command.js';
import { UsageError } from '../cli-error.js';
import { escapeControls } from '../../shared/control-escape.js';
import { formatAge, formatDuration, renderTable, type Column } from '../format.js';

interface WaitingExec {
  id: string;
  task: string;
  command: string;
  program: string;
  argv: string[];
  rule: number | null;
  rule_text: string;
  reason: string;
  asked_at: string;
  expires_at: string;
}

const COLUMNS: Column[] = [
  { header: 'ID' },
  { header: 'TASK' },
  { header: 'WAITING', align: 'right' },
  { header: 'LEFT', align: 'right' },
  { header: 'COMMAND' },
  { header: 'RULE' },
];

export const approvalsCommand: Command = {
  name: 'approvals',
  summary: 'the execs that wait for a person to approve or deny them (the command policy asks)',
  usage: 'hive-bash approvals',
  help: [
    "Lists each exec a rule of the daemon's command policy (--policy) asks about, blocked until",
    'hive-bash approve ID or hive-bash deny ID answers it, or --policy-ask-timeout refuses it.',
  ],
  options: {},
  async run(context) {
    const report = await context.client.getJson<{ policy: string | null; approvals: WaitingExec[] }>('/approvals');
    if (context.json) {
      writeJson(context, report);
      return 0;
    }
    if (report.policy === null) context.write('no command policy (the daemon was started without --policy)\n');
    else if (report.approvals.length === 0) context.write('nothing waits for approval\n');
    else {
      const now = Date.now();
      const rows = report.approvals.map((exec) => [
        exec.id,
        exec.task,
        formatAge(exec.asked_at, now),
        formatDuration(Math.max(0, Date.parse(exec.expires_at) - now)),
        exec.command,
        `${exec.rule === null ? 'default' : `rule ${exec.rule}`}: ${exec.reason}`,
      ]);
      context.write(`${renderTable(COLUMNS, rows, context.width)}\n`);
    }
    return 0;
  },
};

/** approve and deny: the same command but for the answer it sends. */
function answerCommand(answer: 'approve' | 'deny'): Command {
  const verb = answer === 'approve' ? 'approves' : 'denies';
  return {
    name: answer,
    summary: `${verb} execs that wait for a person (hive-bash approvals lists their ids)`,
    usage: `hive-bash ${answer} ID…`,
    help: [
      `${answer === 'approve' ? 'Lets each exec go on' : 'Refuses each exec (it fails with "Permission denied", and its task\'s stderr says why)'}.`,
      "Refused from inside one of the daemon's own tasks: a task never answers an approval. Exit 1 if any id waits no more.",
    ],
    options: {},
    run: (context, _values, positionals) => answerEach(context, answer, positionals),
  };
}

async function answerEach(context: CommandContext, answer: 'approve' | 'deny', ids: string[]): Promise<number> {
  if (ids.length === 0)
    throw new UsageError(`give the id of an exec that waits (hive-bash approvals lists them); got none`);
  const answered: WaitingExec[] = [];
  let failed = 0;
  for (const id of ids) {
    try {
      const result = await context.client.postJson<{ approval: WaitingExec }>(
        `/approvals/${encodeURIComponent(id)}/${answer}`,
      );
      answered.push(result.approval);
      if (!context.json)
        context.write(
          `${answer === 'approve' ? 'approved' : 'denied'} ${escapeControls(`${id}: ${result.approval.command} (task ${result.approval.task})`)}\n`,
        );
    } catch (error) {
      if (ids.length === 1) throw error;
      failed++;
      context.warn((error as Error).message);
    }
  }
  if (context.json) writeJson(context, { answer, approvals: answered });
  return failed > 0 ? 1 : 0;
}

export const approveCommand = answerCommand('approve');
export const denyCommand = answerCommand('deny');
