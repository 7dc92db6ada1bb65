// The operator's routes of the command policy, beside /mcp and behind the same guard (the token):
// GET /policy, GET /approvals, and POST /approvals/ID/approve or /deny. They are no MCP tool, so an
// agent cannot call them as one; and a request from a process of one of the daemon's own tasks is
// refused, so a task cannot approve its own exec (or another's) through them either.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HiveError } from '../../errors.js';
import { ApprovalError, ApprovalFromTaskError } from '../policy/approval-errors.js';
import { sendJson } from '../mcp/json-rpc.js';
import type { Answer, Approval, ApprovalBoard, TaskCallCheck } from '../policy/approvals.js';
import { describePolicy, type LoadedPolicy } from '../policy/policy-file.js';

const ANSWER_PATH = /^\/approvals\/([^/]+)\/(approve|deny)$/;

export class OperatorRoutes {
  constructor(
    private readonly policy: LoadedPolicy | null,
    private readonly approvals: ApprovalBoard | null,
    private readonly fromTask: TaskCallCheck,
  ) {}

  /** Whether `path` is one of these routes. */
  serves(path: string): boolean {
    return path === '/policy' || path === '/approvals' || path.startsWith('/approvals/');
  }

  handle(req: IncomingMessage, res: ServerResponse, path: string): void {
    if (req.method === 'GET' && path === '/policy') return sendJson(res, 200, { policy: describePolicy(this.policy) });
    if (req.method === 'GET' && path === '/approvals')
      return sendJson(res, 200, {
        policy: this.policy === null ? null : this.policy.file,
        approvals: (this.approvals?.list() ?? []).map(describeApproval),
      });
    const answer = req.method === 'POST' ? ANSWER_PATH.exec(path) : null;
    if (answer === null)
      return sendJson(res, 404, {
        error: {
          code: 'ERR_NOT_FOUND',
          message: `${req.method} ${path.slice(0, 80)} is no route: GET /policy, GET /approvals, POST /approvals/ID/approve and POST /approvals/ID/deny are`,
        },
      });
    const caller = this.fromTask(req);
    if (caller !== null) return sendError(res, 403, new ApprovalFromTaskError(`this ${answer[2]}`, caller));
    try {
      const id = decodeURIComponent(answer[1]!);
      if (this.approvals === null) throw new ApprovalError(id);
      const approval = this.approvals.answer(id, answer[2] as Answer, 'operator');
      return sendJson(res, 200, { answer: answer[2], approval: describeApproval(approval) });
    } catch (error) {
      if (error instanceof ApprovalError) return sendError(res, 404, error);
      throw error;
    }
  }
}

/** An approval as the operator's routes and hive-bash show it. */
export function describeApproval(approval: Approval) {
  return {
    id: approval.id,
    task: approval.taskId,
    command: approval.exec.command,
    program: approval.exec.path,
    argv: approval.exec.argv,
    rule: approval.rule,
    rule_text: approval.ruleText,
    reason: approval.reason,
    asked_at: new Date(approval.askedAt).toISOString(),
    expires_at: new Date(approval.expiresAt).toISOString(),
  };
}

function sendError(res: ServerResponse, status: number, error: HiveError): void {
  sendJson(res, status, { error: { code: error.code, message: error.message } });
}
