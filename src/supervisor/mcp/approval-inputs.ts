// A person's approval asked through the agent's own MCP client (2026-07-28): to a client that
// declared `elicitation`, a run whose task has an exec waiting answers `input_required` with one
// form per exec ("Allow `git push --force origin main`? (rule: no force pushes)"; accept approves,
// decline refuses) and a requestState; its retry, with the person's inputResponses and that state,
// answers the approvals and resumes the same task's wait. Only a person declines: `cancel` (what a
// headless client answers without asking anyone) leaves the exec waiting for the operator's
// hive-bash approve until --policy-ask-timeout, and the client is not asked about it again. An
// answer that comes after another decided is told so (who decided, and when), never dropped.
// The state is HMAC-signed with a key of this daemon's, bound to the tool, a digest of its
// arguments, the task and the approvals, and expires with them (the spec's MRTR section: it is
// attacker-controlled input). Through the Tasks extension the same forms are the task's
// inputRequests, answered by tasks/update.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { escapeControls } from '../../shared/control-escape.js';
import { ApprovalError, ApprovalFromTaskError } from '../policy/approval-errors.js';
import type { Approval, ApprovalBoard, TaskCallCheck } from '../policy/approvals.js';
import { isObject } from './json-object.js';
import { INVALID_PARAMS, RpcError } from './json-rpc.js';

const KEY_PREFIX = 'approve-';
const STATE_VERSION = 1;

interface StatePayload {
  v: number;
  tool: string;
  args: string;
  task: string;
  approvals: string[];
  exp: number;
}

/**
 * What a retry carried: the task to resume (`cancelled`: the client cancelled a form, so the
 * caller is told at once that the exec waits for the operator; `notes`: answers that came too
 * late), or why its answers were refused.
 */
export type Retry = { taskId: string; cancelled: boolean; notes: string[] } | { refused: ApprovalFromTaskError };

/** What answering a set of responses came to: a form cancelled, and what is to be told of answers too late. */
interface Answered {
  cancelled: boolean;
  notes: string[];
}

/** Whether the request's client capabilities declare elicitation (so it may be sent elicitation/create). */
export function declaresElicitation(capabilities: Record<string, unknown>): boolean {
  return isObject(capabilities.elicitation);
}

export class ApprovalInputs {
  private readonly key = randomBytes(32);

  constructor(
    private readonly approvals: ApprovalBoard | null,
    private readonly fromTask: TaskCallCheck,
  ) {}

  /** The forms asking about task `taskId`'s waiting execs, by key; null when none waits. */
  requestsFor(taskId: string): Record<string, unknown> | null {
    const waiting = this.approvals?.askable(taskId) ?? [];
    if (waiting.length === 0) return null;
    return Object.fromEntries(waiting.map((approval) => [`${KEY_PREFIX}${approval.id}`, elicitationOf(approval)]));
  }

  /** run's input_required result for task `taskId` when execs of it wait; else null. */
  inputRequired(tool: string, args: unknown, taskId: string): Record<string, unknown> | null {
    const waiting = this.approvals?.askable(taskId) ?? [];
    const inputRequests = this.requestsFor(taskId);
    if (inputRequests === null) return null;
    const payload: StatePayload = {
      v: STATE_VERSION,
      tool,
      args: digestOf(args),
      task: taskId,
      approvals: waiting.map((approval) => approval.id),
      exp: Math.max(...waiting.map((approval) => approval.expiresAt)),
    };
    return { resultType: 'input_required', inputRequests, requestState: this.sign(payload) };
  }

  /**
   * A retry of `tool` with `params.requestState`: the state checked (a forged, stale or misplaced
   * one is an RpcError), the approvals it names answered from `params.inputResponses` (unless the
   * call comes from one of the daemon's tasks), and the task to resume. Null for a first call.
   */
  retry(tool: string, params: Record<string, unknown>, from: IncomingMessage): Retry | null {
    if (params.requestState === undefined) return null;
    const state = this.verify(params.requestState, tool, params.arguments);
    const responses = isObject(params.inputResponses) ? params.inputResponses : {};
    const answered = state.approvals.filter((id) => `${KEY_PREFIX}${id}` in responses);
    const caller = answered.length > 0 ? this.fromTask(from) : null;
    if (caller !== null) return { refused: new ApprovalFromTaskError('this retry of run', caller) };
    return { taskId: state.task, ...this.answerAll(answered, responses) };
  }

  /**
   * tasks/update: answers task `taskId`'s approvals its inputResponses name, waiting or decided
   * meanwhile (keys of none are ignored, as the extension says); returns the notes on late answers.
   */
  update(taskId: string, inputResponses: unknown, from: IncomingMessage): string[] {
    if (!isObject(inputResponses)) return [];
    const ids = Object.keys(inputResponses)
      .filter((key) => key.startsWith(KEY_PREFIX))
      .map((key) => key.slice(KEY_PREFIX.length))
      .filter(
        (id) =>
          this.approvals?.forTask(taskId).some((approval) => approval.id === id) ||
          this.approvals?.decidedFor(id, taskId),
      );
    const caller = ids.length > 0 ? this.fromTask(from) : null;
    if (caller !== null) throw new ApprovalFromTaskError('this tasks/update', caller);
    return this.answerAll(ids, inputResponses).notes;
  }

  private answerAll(ids: string[], responses: Record<string, unknown>): Answered {
    const answered: Answered = { cancelled: false, notes: [] };
    for (const id of ids) {
      const action = actionOf(responses[`${KEY_PREFIX}${id}`]);
      try {
        if (action === 'cancel') {
          this.approvals?.cancelByClient(id);
          answered.cancelled = true;
        } else this.approvals?.answer(id, action === 'accept' ? 'approve' : 'deny', 'client');
      } catch (error) {
        if (!(error instanceof ApprovalError)) throw error;
        answered.notes.push(lateAnswer(id, action, error.decided));
      }
    }
    return answered;
  }

  private sign(payload: StatePayload): string {
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${createHmac('sha256', this.key).update(body).digest('base64url')}`;
  }

  private verify(state: unknown, tool: string, args: unknown): StatePayload {
    const refuse = (why: string) =>
      new RpcError(
        INVALID_PARAMS,
        `Invalid params: params.requestState ${why}; send the requestState of this server's last input_required answer to this call, unchanged, or call again without it`,
      );
    if (typeof state !== 'string') throw refuse('must be a string');
    const [body, mac] = state.split('.');
    const expected = createHmac('sha256', this.key)
      .update(body ?? '')
      .digest();
    const given = Buffer.from(mac ?? '', 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      throw refuse('failed verification (it was not made by this daemon, or was changed)');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString()) as StatePayload;
    if (payload.v !== STATE_VERSION || payload.tool !== tool || payload.args !== digestOf(args))
      throw refuse(`was given for another call (${payload.tool} with other arguments)`);
    if (payload.exp < Date.now()) throw refuse('has expired: the execs it asked about were refused meanwhile');
    return payload;
  }
}

/**
 * The form that asks a person about one exec: nothing but the decision. A client shows the message
 * to a person, on a terminal as often as not: the task's text in it has its controls escaped.
 */
function elicitationOf(approval: Approval): Record<string, unknown> {
  const { command, path } = approval.exec;
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: escapeControls(
        `Allow \`${command}\`? (rule: ${approval.reason}) Task ${approval.taskId} runs ${path}; accept runs it, decline refuses it.`,
      ),
      requestedSchema: { type: 'object', properties: {} },
    },
  };
}

/** accept approves and decline refuses; cancel, or anything else (no answer a person gave), leaves the exec waiting. */
function actionOf(response: unknown): 'accept' | 'decline' | 'cancel' {
  const action = isObject(response) ? response.action : undefined;
  return action === 'accept' || action === 'decline' ? action : 'cancel';
}

/** What the caller is told of an answer to an approval that was decided before it came. */
function lateAnswer(id: string, action: string, decided: string | null): string {
  const what = action === 'cancel' ? 'cancel' : action;
  return `Your ${what} of approval ${id} came too late and changed nothing: ${decided ?? 'it was answered already, expired, or its task ended'}.`;
}

/** A digest of a call's arguments, the same for the same JSON whatever the order of its members. */
function digestOf(args: unknown): string {
  return createHash('sha256').update(canonicalJson(args)).digest('base64url');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}
