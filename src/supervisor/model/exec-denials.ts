// The execs the command policy refused in a task: how many, and the last few, as status, the todo
// and the registry keep them.
import type { ExecCall } from '../../process/launched-task.js';
import type { DeniedExecView, TaskPolicyView, WaitingExecView } from '../../shared/task-snapshot.js';

/** The refusals a task keeps in full; older ones are only counted. */
export const KEPT_DENIALS = 10;

/** One refused exec, as the record keeps it: status's view of it, its time in ms since the epoch. */
export type DeniedExec = Omit<DeniedExecView, 'at'> & { at: number };

export interface ExecDenials {
  count: number;
  /** The last KEPT_DENIALS refusals, oldest first. */
  recent: DeniedExec[];
}

export const NO_DENIALS: ExecDenials = { count: 0, recent: [] };

/** `denials` with one more refusal. */
export function addDenial(
  denials: ExecDenials,
  denied: { rule: number | null; exec: ExecCall; reason: string },
  at: number,
): ExecDenials {
  const entry: DeniedExec = {
    command: denied.exec.command,
    program: denied.exec.path,
    rule: denied.rule,
    reason: denied.reason,
    at,
  };
  return { count: denials.count + 1, recent: [...denials.recent, entry].slice(-KEPT_DENIALS) };
}

/** The view of `denials` beside what waits now. */
export function policyView(denials: ExecDenials, waiting: WaitingExecView[]): TaskPolicyView {
  return {
    denied: denials.recent.map((denial) => ({ ...denial, at: new Date(denial.at).toISOString() })),
    denied_count: denials.count,
    waiting,
  };
}
