// The execs that wait for a person (a rule of the command policy says ask): each has an id the
// operator's approve and deny take, is answered once (approved, denied, or refused when no one
// answered within --policy-ask-timeout), and goes when its task's process is gone. The first answer
// decides; who gave it and when is kept a while, so that a later answer is told (never dropped).
// A client that cancelled its form leaves the exec waiting for the other routes.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BoundedCache } from '../bounded-cache.js';
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
  /** The agent's MCP client cancelled its form (no one was asked there): it is not asked again. */
  clientCancelled: boolean;
}

/** How an approval was settled: by whom (the timeout, when no one answered), which way, and when. */
export interface Decision {
  taskId: string;
  by: Answerer | 'timeout';
  allow: boolean;
  at: number;
}

/** Settled approvals remembered for a later answer's sake. */
const DECISIONS_KEPT = 1024;

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
  /** How recent approvals were settled, by id: what a later answer is told. */
  private readonly decisions = new BoundedCache<string, Decision>(DECISIONS_KEPT);

  constructor(private readonly askTimeoutMs: number) {}

  /** An exec of task `taskId` asks: it waits as a new approval until answered or the timeout. */
  open(asked: Omit<Approval, 'id' | 'askedAt' | 'expiresAt' | 'clientCancelled'>, task: AskingTask): Approval {
    const askedAt = Date.now();
    const approval: Approval = {
      ...asked,
      id: randomBytes(4).toString('hex'),
      askedAt,
      expiresAt: askedAt + this.askTimeoutMs,
      clientCancelled: false,
    };
    const timer = setTimeout(() => this.expire(approval.id), this.askTimeoutMs).unref();
    this.waiting.set(approval.id, { approval, task, timer });
    task.changed(true);
    const watchers = this.watchers.get(approval.taskId);
    this.watchers.delete(approval.taskId);
    for (const wake of watchers ?? []) wake();
    return approval;
  }

  /**
   * Answers approval `id`; throws ApprovalError for an id that waits no more (answered, expired,
   * its task gone), saying who decided it and when where that is known.
   */
  answer(id: string, answer: Answer, by: Answerer): Approval {
    const entry = this.waiting.get(id);
    if (entry === undefined) throw new ApprovalError(id, this.decisionOf(id));
    const reason =
      answer === 'approve'
        ? ''
        : by === 'operator'
          ? 'the operator denied it (hive-bash deny)'
          : 'the person asked through the MCP client declined it';
    this.settle(entry, { taskId: entry.approval.taskId, by, allow: answer === 'approve', at: Date.now() }, reason);
    return entry.approval;
  }

  /** The client cancelled approval `id`'s form: it waits on for the operator, and the client is not asked again. */
  cancelByClient(id: string): Approval {
    const entry = this.waiting.get(id);
    if (entry === undefined) throw new ApprovalError(id, this.decisionOf(id));
    entry.approval.clientCancelled = true;
    return entry.approval;
  }

  /** Who settled approval `id`, which way and when, in words; null when it is not remembered. */
  decisionOf(id: string): string | null {
    const decision = this.decisions.get(id);
    return decision === undefined ? null : describeDecision(decision, this.askTimeoutMs);
  }

  /** Whether approval `id` was one of task `taskId`'s, settled recently. */
  decidedFor(id: string, taskId: string): boolean {
    return this.decisions.get(id)?.taskId === taskId;
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

  /** What of task `taskId` waits that its client may still be asked about (its form was not cancelled). */
  askable(taskId: string): Approval[] {
    return this.forTask(taskId).filter((approval) => !approval.clientCancelled);
  }

  /** Resolves once task `taskId` has an approval its client may be asked about (at once if it has one), or its run ended. */
  whenAsked(taskId: string): Promise<void> {
    if (this.askable(taskId).length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.watchers.get(taskId) ?? new Set();
      set.add(resolve);
      this.watchers.set(taskId, set);
    });
  }

  private expire(id: string): void {
    const entry = this.waiting.get(id);
    if (entry === undefined) return;
    this.settle(
      entry,
      { taskId: entry.approval.taskId, by: 'timeout', allow: false, at: Date.now() },
      `no one approved it within ${Math.round(this.askTimeoutMs / 1000)} s`,
    );
  }

  private settle(entry: Waiting, decision: Decision, reason: string): void {
    entry.task.answer(entry.approval.seq, decision.allow, reason);
    this.decisions.set(entry.approval.id, decision);
    this.forget(entry);
  }

  private forget(entry: Waiting): void {
    clearTimeout(entry.timer);
    this.waiting.delete(entry.approval.id);
    entry.task.changed(false);
  }
}

/** `the operator approved it (hive-bash approve) at 2026-12-07T09:01:02.345Z`. */
export function describeDecision(decision: Decision, askTimeoutMs: number): string {
  const at = new Date(decision.at).toISOString();
  if (decision.by === 'timeout')
    return `no one answered it within ${Math.round(askTimeoutMs / 1000)} s: it was refused at ${at}`;
  if (decision.by === 'operator')
    return decision.allow
      ? `the operator approved it (hive-bash approve) at ${at}`
      : `the operator denied it (hive-bash deny) at ${at}`;
  return `the person asked through the MCP client ${decision.allow ? 'accepted' : 'declined'} it at ${at}`;
}
