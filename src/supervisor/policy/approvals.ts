// The execs that wait for a person (a rule of the command policy says ask): each has an id the
// operator's approve and deny take, is answered once (approved, denied, or refused when no one
// answered within --policy-ask-timeout), and goes when its task's process is gone.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApprovalError } from './approval-errors.js';
import type { ExecCall } from '../../process/launched-task.js';

/** One exec that waits, as the operator, the client and the todo see it. */
export interface Approval {
  id: string;
  taskId: string;
  /** The run of the task it belongs to, and its number in that run (the shim's). */
  runKey: string;
  seq: number;
  exec: ExecCall;
  /** The rule that asks (its index in the policy file), null for the policy's default. */
  rule: number | null;
  /** The rule's words and its reason, as the question shows them. */
  ruleText: string;
  reason: string;
  askedAt: number;
  expiresAt: number;
}

/**
 * Who among the daemon's own tasks sent a request, in words to finish "it came from"
 * (`process 412 of task task-3`, or why it may be a task's and which cannot be told); null when
 * it comes from outside them. A request from a task never answers an approval.
 */
export type TaskCallCheck = (req: IncomingMessage) => string | null;

/** Who answered, for the reason a refused exec tells the task. */
export type Answerer = 'operator' | 'client';
export type Answer = 'approve' | 'deny';

/** Where an approval's answer goes (the task's worker, and so its shim), and what the task hears of it. */
export interface AskingTask {
  answer(seq: number, allow: boolean, reason: string): void;
  /** Its approvals changed: one opened (`opened`) or one went. */
  changed(opened: boolean): void;
}

interface Waiting {
  approval: Approval;
  task: AskingTask;
  timer: NodeJS.Timeout;
}

export class ApprovalBoard {
  private readonly waiting = new Map<string, Waiting>();
  /** Who waits for a task's next approval (run's and status's waits), by task id. */
  private readonly watchers = new Map<string, Set<() => void>>();

  constructor(private readonly askTimeoutMs: number) {}

  /** An exec of task `taskId` asks: it waits as a new approval until answered or the timeout. */
  open(asked: Omit<Approval, 'id' | 'askedAt' | 'expiresAt'>, task: AskingTask): Approval {
    const askedAt = Date.now();
    const approval: Approval = {
      ...asked,
      id: randomBytes(4).toString('hex'),
      askedAt,
      expiresAt: askedAt + this.askTimeoutMs,
    };
    const timer = setTimeout(() => this.expire(approval.id), this.askTimeoutMs).unref();
    this.waiting.set(approval.id, { approval, task, timer });
    task.changed(true);
    const watchers = this.watchers.get(approval.taskId);
    this.watchers.delete(approval.taskId);
    for (const wake of watchers ?? []) wake();
    return approval;
  }

  /** Answers approval `id`; throws ApprovalError for an id that waits no more (answered, expired, its task gone). */
  answer(id: string, answer: Answer, by: Answerer): Approval {
    const entry = this.waiting.get(id);
    if (entry === undefined) throw new ApprovalError(id);
    const reason =
      answer === 'approve'
        ? ''
        : by === 'operator'
          ? 'the operator denied it (hive-bash deny)'
          : 'the person asked through the MCP client declined it';
    this.settle(entry, answer === 'approve', reason);
    return entry.approval;
  }

  /** The exec of ask `seq` of run `runKey` waits no more (its process died, or asked again). */
  withdraw(runKey: string, seq: number): void {
    for (const entry of this.waiting.values())
      if (entry.approval.runKey === runKey && entry.approval.seq === seq) this.forget(entry);
  }

  /** Task `taskId`'s run `runKey` ended: whatever of it waited is gone with it, and no approval of it will come. */
  endRun(taskId: string, runKey: string): void {
    for (const entry of this.waiting.values()) if (entry.approval.runKey === runKey) this.forget(entry);
    const watchers = this.watchers.get(taskId);
    this.watchers.delete(taskId);
    for (const wake of watchers ?? []) wake();
  }

  /** How many approvals wait. */
  get size(): number {
    return this.waiting.size;
  }

  /** What waits, oldest first. */
  list(): Approval[] {
    return [...this.waiting.values()].map((entry) => entry.approval);
  }

  /** What of task `taskId` waits, oldest first. */
  forTask(taskId: string): Approval[] {
    return this.list().filter((approval) => approval.taskId === taskId);
  }

  /** Resolves once task `taskId` has an approval waiting (at once if it has one), or its run ended. */
  whenAsked(taskId: string): Promise<void> {
    if (this.forTask(taskId).length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.watchers.get(taskId) ?? new Set();
      set.add(resolve);
      this.watchers.set(taskId, set);
    });
  }

  private expire(id: string): void {
    const entry = this.waiting.get(id);
    if (entry === undefined) return;
    this.settle(entry, false, `no one approved it within ${Math.round(this.askTimeoutMs / 1000)} s`);
  }

  private settle(entry: Waiting, allow: boolean, reason: string): void {
    entry.task.answer(entry.approval.seq, allow, reason);
    this.forget(entry);
  }

  private forget(entry: Waiting): void {
    clearTimeout(entry.timer);
    this.waiting.delete(entry.approval.id);
    entry.task.changed(false);
  }
}
