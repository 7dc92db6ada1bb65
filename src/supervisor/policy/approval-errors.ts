// The refusals of an answer to an exec that waits for a person: it names none that waits, or it
// comes from one of the daemon's own tasks.
import { ToolRefusal } from '../../errors.js';

/**
 * An approve or deny named no exec that waits (it never did, was answered, expired, or its task
 * ended); `decided`, where known, says who decided it and when.
 */
export class ApprovalError extends ToolRefusal {
  override readonly code = 'ERR_UNKNOWN_APPROVAL';
  constructor(
    id: string,
    readonly decided: string | null = null,
  ) {
    const shown = JSON.stringify(id.length > 40 ? `${id.slice(0, 40)}...` : id);
    super(
      decided === null
        ? `no exec waits for approval as ${shown}: it was answered already, no one answered it in time, or its task ended; hive-bash approvals lists what waits`
        : `no exec waits for approval as ${shown}: ${decided}, and that first answer stands; hive-bash approvals lists what waits`,
    );
  }
}

/** A process of one of the daemon's own tasks (or one that may be) tried to answer an approval: a task never approves an exec. */
export class ApprovalFromTaskError extends ToolRefusal {
  override readonly code = 'ERR_APPROVAL_FROM_TASK';
  constructor(what: string, caller: string) {
    super(
      `${what} came from ${caller}, and a process of one of this daemon's tasks cannot answer an approval (its own or another's): a person answers, through the agent's MCP client or hive-bash approve and deny outside the tasks`,
    );
  }
}
