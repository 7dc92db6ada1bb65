// What the tools and the server's instructions say of an exec that waits for a person, where the
// daemon has a command policy (--policy): what it looks like (the task running, notes naming the
// command and `hive-bash approve ID`) and that a status wait waits through it. Beside end-notice.ts's
// sentences on a task's end, which hold with or without a policy.
import { instructionsFor, type EndAdvice } from './end-notice.js';

/** What the tools' texts follow: how a task's end is told, and whether a command policy may ask. */
export interface ToolAdvice extends EndAdvice {
  /** The daemon has a command policy: an exec of a task may wait for a person's approval. */
  approvals: boolean;
}

/** run's sentence on an exec that waits for approval; empty without a policy. */
export function runApprovalAdvice(advice: ToolAdvice): string {
  return advice.approvals
    ? ' A program the policy asks about waits for a person: the result says so in notes, with the `hive-bash approve ID` the user runs; status with wait_seconds waits through it.'
    : '';
}

/** status's sentence on waiting through an approval; empty without a policy. */
export function statusApprovalAdvice(advice: ToolAdvice): string {
  return advice.approvals ? ' A program waiting for approval (see notes) does not end the wait.' : '';
}

/** The server's instructions: end-notice.ts's, and what a pending approval looks like under a policy. */
export function toolInstructions(advice: ToolAdvice): string {
  const approvals = advice.approvals
    ? " Under the operator's command policy a program may wait for a person's approval: its task stays running, and the result's notes and policy.waiting name the command and the `hive-bash approve ID` (or deny) the user runs; a client that can ask a person is asked once (cancelling asks no one and leaves it waiting for the user). status with wait_seconds waits through it for the decision and the end."
    : '';
  return `${instructionsFor(advice)}${approvals}`;
}
