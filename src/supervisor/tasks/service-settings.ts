// What the task service is configured with: the queue's bounds, the kill's grace, the output cap,
// and the operator's policies for limits, sandboxes and commands.
import type { ApprovalBoard } from '../policy/approvals.js';
import type { LoadedPolicy } from '../policy/policy-file.js';
import type { LimitPolicy } from './task-limits.js';
import type { SandboxPolicy } from './task-sandbox.js';

export interface ServiceSettings {
  maxRunning: number;
  maxPending: number;
  maxPendingBytes: number;
  defaultTimeoutSeconds: number | null;
  killGraceMs: number;
  maxOutputBytes: number;
  limitPolicy: LimitPolicy;
  sandboxPolicy: SandboxPolicy;
  /** The operator's command policy, and the execs that wait for a person under it; null: none. */
  policy: LoadedPolicy | null;
  approvals: ApprovalBoard | null;
}
