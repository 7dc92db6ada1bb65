// What the command policy's reports of a task's execs do in the service: a refusal joins the
// task's record (and its todo); an exec that asks opens an approval, whose answer goes back to the
// task's worker and on to its shim; an ask whose process is gone is withdrawn.
import type { ExecCall } from '../../process/launched-task.js';
import type { ExecReport } from '../../workers/protocol.js';
import type { LifecycleEvent } from '../model/lifecycle.js';
import { DEFAULT_REASONS, describeRuleWords, type CommandPolicy } from '../../shared/command-policy.js';
import type { ApprovalBoard } from '../policy/approvals.js';
import type { LiveTask } from './live-task.js';

/**
 * How many execs of all tasks may wait for a person at once (each task's shim holds at most 64 of
 * its own): past it an exec that asks is refused at once, so that no task holds the daemon's
 * memory, or the operator's list, with questions.
 */
export const MAX_WAITING_APPROVALS = 256;
const TOO_MANY_WAITING = `too many execs of all tasks wait for approval at once (${MAX_WAITING_APPROVALS})`;
/** Of an exec's words, what a question keeps and shows: its command and arguments cut to this many characters. */
const MAX_APPROVAL_TEXT = 4096;

/** `exec` with its command and arguments cut to MAX_APPROVAL_TEXT characters in all (`cut` then set). */
function boundExecText(exec: ExecCall): ExecCall {
  if (exec.command.length <= MAX_APPROVAL_TEXT && exec.argv.join(' ').length <= MAX_APPROVAL_TEXT) return exec;
  const argv: string[] = [];
  let room = MAX_APPROVAL_TEXT;
  for (const word of exec.argv) {
    if (room <= 0) break;
    argv.push(word.slice(0, room));
    room -= word.length + 1;
  }
  return { ...exec, argv, command: exec.command.slice(0, MAX_APPROVAL_TEXT), cut: true };
}

export class TaskExecs {
  constructor(
    private readonly policy: CommandPolicy | null,
    private readonly approvals: ApprovalBoard | null,
    /** Advances a live task (the service's apply). */
    private readonly apply: (task: LiveTask, event: LifecycleEvent) => void,
  ) {}

  /** Carries out one report of what the policy did with an exec of `task`. */
  onReport(task: LiveTask, report: ExecReport): void {
    if (report.event === 'denied') {
      const { rule, exec, reason } = report;
      this.apply(task, { type: 'exec-denied', rule, exec, reason, at: Date.now() });
      return;
    }
    if (this.approvals === null) return;
    if (report.event === 'gone') return this.approvals.withdraw(task.record.runKey, report.seq);
    const answer = (seq: number, allow: boolean, reason: string) =>
      task.worker?.send({ type: 'exec-answer', seq, allow, reason });
    if (this.approvals.size >= MAX_WAITING_APPROVALS) return answer(report.seq, false, TOO_MANY_WAITING);
    const rule = report.rule === null ? null : (this.policy?.rules[report.rule] ?? null);
    this.approvals.open(
      {
        taskId: task.record.id,
        runKey: task.record.runKey,
        seq: report.seq,
        exec: boundExecText(report.exec),
        rule: report.rule,
        ruleText: rule === null ? "the policy's default" : describeRuleWords(rule),
        reason: rule?.reason ?? DEFAULT_REASONS.ask,
      },
      {
        answer,
        changed: (opened) => this.apply(task, { type: 'asking', open: opened }),
      },
    );
  }

  /** Nothing of the task's run is left: what of it waited is gone, and waits for its approvals end. */
  released(task: LiveTask): void {
    this.approvals?.endRun(task.record.id, task.record.runKey);
  }
}
