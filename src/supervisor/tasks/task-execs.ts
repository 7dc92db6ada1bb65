// What the command policy's reports of a task's execs do in the service: a refusal joins the
// task's record (and its todo); an exec that asks opens an approval, whose answer goes back to the
// task's worker and on to its shim; an ask whose process is gone is withdrawn.
import type { ExecReport } from '../../workers/protocol.js';
import type { LifecycleEvent } from '../model/lifecycle.js';
import { DEFAULT_REASONS, describeRuleWords, type CommandPolicy } from '../../shared/command-policy.js';
import type { ApprovalBoard } from '../policy/approvals.js';
import type { LiveTask } from './live-task.js';

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
    const rule = report.rule === null ? null : (this.policy?.rules[report.rule] ?? null);
    this.approvals.open(
      {
        taskId: task.record.id,
        runKey: task.record.runKey,
        seq: report.seq,
        exec: report.exec,
        rule: report.rule,
        ruleText: rule === null ? "the policy's default" : describeRuleWords(rule),
        reason: rule?.reason ?? DEFAULT_REASONS.ask,
      },
      {
        answer: (seq, allow, reason) => task.worker?.send({ type: 'exec-answer', seq, allow, reason }),
        changed: (opened) => this.apply(task, { type: 'asking', open: opened }),
      },
    );
  }

  /** Nothing of the task's run is left: what of it waited is gone, and waits for its approvals end. */
  released(task: LiveTask): void {
    this.approvals?.endRun(task.record.id, task.record.runKey);
  }
}
