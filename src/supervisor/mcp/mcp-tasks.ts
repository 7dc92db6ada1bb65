// MCP tasks (the Tasks extension, io.modelcontextprotocol/tasks) in the 2026-07-28 era: the MCP
// task a run answers with when the daemon's task outlives the wait, and tasks/get, tasks/cancel and
// tasks/update on it. An MCP task is one of the daemon's tasks: its taskId is the task's id. One
// whose exec waits for a person is input_required to a client that declared elicitation, with a
// form per exec (approval-inputs.ts), answered by tasks/update; to any other it stays working.
import type { IncomingMessage } from 'node:http';
import { UnknownTaskError } from '../../errors.js';
import { ApprovalFromTaskError } from '../policy/approval-errors.js';
import { DEFAULT_TAIL_BYTES, summarizeTask } from '../model/task-snapshot.js';
import { type TaskRecord } from '../model/task.js';
import { isFinished } from '../../shared/task-states.js';
import type { TaskService } from '../tasks/task-service.js';
import { isObject } from './json-object.js';
import { INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, RpcError } from './json-rpc.js';
import { describeTask, shapeTask } from './task-snapshot-schema.js';
import type { ApprovalInputs } from './approval-inputs.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** Where tasks/update's answer says what became of answers that came too late. */
export const NOTES_META = 'hive-bash/notes';
/** How often a client should poll tasks/get; a task's end also reaches the harness as a todo. */
export const POLL_INTERVAL_MS = 1000;
/** Run's answers that are still going but were asked to wait for readiness, not for the end. */
const READY_RESULTS = new Set(['matched', 'listening']);

export type McpTaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** Whether the request's client capabilities declare the Tasks extension. */
export function declaresTasks(capabilities: Record<string, unknown>): boolean {
  const extensions = capabilities.extensions;
  return isObject(extensions) && isObject(extensions[TASKS_EXTENSION]);
}

/**
 * Whether a tool's result is to be answered as a task: a run whose task was still going when its
 * wait ran out. A run that waited for readiness (wait_for, wait_for_port) and got it answers
 * with what it found, as it does for every client.
 */
export function outlivedWait(
  toolName: string,
  result: { isError?: boolean; structuredContent?: Record<string, unknown> },
): string | null {
  const snapshot = result.structuredContent;
  if (toolName !== 'run' || result.isError === true || snapshot === undefined) return null;
  if (snapshot.state !== 'pending' && snapshot.state !== 'running') return null;
  if (typeof snapshot.wait_result === 'string' && READY_RESULTS.has(snapshot.wait_result)) return null;
  return typeof snapshot.id === 'string' ? snapshot.id : null;
}

export class McpTasks {
  constructor(
    private readonly tasks: TaskService,
    /** How long a finished task is kept (--retention-days); tasks/get finds it until then. */
    private readonly ttlMs: number,
    private readonly inputs: ApprovalInputs,
  ) {}

  /** The CreateTaskResult of a run whose task goes on; its record is in the registry already. */
  created(id: string): Record<string, unknown> {
    return { resultType: 'task', ...this.describe(this.find(id)).task };
  }

  /**
   * tasks/get: the task as it is; once it has ended, with its result, handed over (its todo
   * cleared); input_required with the forms of its waiting execs to a client that `canAsk`.
   */
  get(taskId: string, canAsk: boolean): Record<string, unknown> {
    const record = this.find(taskId);
    const current = isFinished(record.state) ? this.tasks.handOver(taskId) : record;
    this.tasks.commit();
    return { resultType: 'complete', ...this.detailed(current, canAsk) };
  }

  /**
   * The task as notifications/tasks carries it (what tasks/get answers, without handing its
   * result over), or null for a task that is not (or no longer) known.
   */
  notification(taskId: string, canAsk: boolean): Record<string, unknown> | null {
    const record = this.tasks.find(taskId);
    return record === null ? null : this.detailed(record, canAsk);
  }

  /** Whether task `taskId` is known (tasks/get would find it). */
  knows(taskId: string): boolean {
    return this.tasks.find(taskId) !== null;
  }

  /** The run of task `taskId` (a rerun of its name is another), or null when it is not known. */
  runOf(taskId: string): string | null {
    return this.tasks.find(taskId)?.runKey ?? null;
  }

  /** The task with what its status carries: its result once it ended, its forms while it waits (to a client that `canAsk`). */
  private detailed(current: TaskRecord, canAsk: boolean): Record<string, unknown> {
    const { task, snapshot } = this.describe(current);
    if (task.status === 'completed') return { ...task, result: toolResult(current, snapshot) };
    if (task.status === 'failed') return { ...task, error: { code: INTERNAL_ERROR, message: task.statusMessage } };
    const inputRequests = canAsk ? this.inputs.requestsFor(current.id) : null;
    if (inputRequests !== null) return { ...task, status: 'input_required', inputRequests };
    return task;
  }

  /** tasks/cancel: the task is killed as `kill` kills it (SIGINT, SIGKILL after the grace period). */
  cancel(taskId: string): Record<string, unknown> {
    this.find(taskId);
    // A pending task is cancelled, a running one signalled, before kill's promise; what a finished
    // one left is ended once read (it may be pruned meanwhile: nothing is left to end then).
    this.tasks.kill(taskId, 'SIGINT').catch(() => {});
    this.tasks.commit();
    return { resultType: 'complete' };
  }

  /**
   * tasks/update: answers the task's execs its inputResponses name (accept approves, decline
   * refuses, cancel leaves it waiting for the operator); a key of none is ignored. An answer to one
   * decided before is told so in `_meta` notes.
   */
  update(taskId: string, inputResponses: unknown, from: IncomingMessage): Record<string, unknown> {
    this.find(taskId);
    let notes: string[];
    try {
      notes = this.inputs.update(taskId, inputResponses, from);
    } catch (error) {
      if (!(error instanceof ApprovalFromTaskError)) throw error;
      throw new RpcError(INVALID_REQUEST, error.message, { error: { code: error.code, message: error.message } });
    }
    return notes.length === 0 ? { resultType: 'complete' } : { resultType: 'complete', _meta: { [NOTES_META]: notes } };
  }

  /** The task as the 2025-11-25 Tasks utility shows it (tasks/get, tasks/list, notifications/tasks/status). */
  shown2025(taskId: string): Record<string, unknown> {
    const { ttlMs, pollIntervalMs, ...task } = this.describe(this.find(taskId)).task;
    return { ...task, ttl: ttlMs, pollInterval: pollIntervalMs };
  }

  /**
   * The result of an ended task as its run would have answered it (tasks/result of 2025-11-25),
   * handed over (its todo cleared), unless its caller `left` (its todo stays); a task the daemon
   * failed is an INTERNAL_ERROR.
   */
  endResult(taskId: string, left = false): Record<string, unknown> {
    const record = left ? this.tasks.unanswered(taskId) : this.tasks.handOver(taskId);
    this.tasks.commit();
    const { task, snapshot } = this.describe(record);
    if (task.status === 'failed') throw new RpcError(INTERNAL_ERROR, task.statusMessage);
    const { isError, ...result } = toolResult(record, snapshot);
    return isError === true ? { ...result, isError } : result;
  }

  private find(taskId: string): TaskRecord {
    try {
      return this.tasks.get(taskId);
    } catch (error) {
      if (!(error instanceof UnknownTaskError)) throw error;
      const shown = taskId.length > 80 ? `${taskId.slice(0, 80)}...` : taskId;
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: params.taskId ${JSON.stringify(shown)} names no task (it never existed, or was pruned after the retention period)`,
      );
    }
  }

  private describe(record: TaskRecord) {
    const snapshot = this.tasks.snapshot(record, DEFAULT_TAIL_BYTES);
    const iso = (ms: number) => new Date(ms).toISOString();
    const task = {
      taskId: record.id,
      status: statusOf(record),
      statusMessage: summarizeTask(snapshot),
      createdAt: iso(record.createdAt),
      lastUpdatedAt: iso(record.endedAt ?? record.startedAt ?? record.createdAt),
      ttlMs: this.ttlMs,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    return { task, snapshot };
  }
}

/** An ended task's result, as the run that waited for its end would have given it. */
function toolResult(record: TaskRecord, snapshot: ReturnType<TaskService['snapshot']>): Record<string, unknown> {
  return {
    content: [{ type: 'text', text: describeTask(snapshot, false) }],
    structuredContent: shapeTask(snapshot, false),
    isError: !(record.state === 'done' && record.exitCode === 0),
  };
}

/**
 * The extension's status of a daemon task: a killed task was cancelled; one the daemon itself
 * failed (it stopped or died meanwhile, or a worker failed) failed; every other end, a non-zero
 * exit or a timeout too, is a completed tool result (with isError).
 */
function statusOf(record: TaskRecord): McpTaskStatus {
  if (!isFinished(record.state)) return 'working';
  if (record.state === 'killed') return 'cancelled';
  if (record.state === 'interrupted' || record.error?.startsWith('internal error') === true) return 'failed';
  return 'completed';
}
