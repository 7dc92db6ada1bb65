// MCP tasks of a 2025-11-25 session (that version's Tasks utility): a tools/call of run with
// params.task answers a CreateTaskResult at once, and tasks/get, tasks/result (which waits for the
// end), tasks/list and tasks/cancel serve the tasks so made, each seen by its own session only. Each
// change of such a task's status goes to the session's GET stream as notifications/tasks/status,
// once. The tasks are those McpTasks serves the 2026-07-28 era, in 2025-11-25's shapes. An exec that
// waits for a person leaves its task working: this era asks for input through tasks/result, which
// is not offered here, so the operator answers it (hive-bash approve) as for any client.
import { echoValue } from '../../shared/echo.js';
import { INVALID_PARAMS, METHOD_NOT_FOUND, RpcError } from './json-rpc.js';
import { isObject, type Loose } from './json-object.js';
import type { McpTasks } from './mcp-tasks.js';
import type { TaskPush } from './task-push.js';
import type { CallToolResult } from './tool-registry.js';
import { callerLeft } from './tool.js';
import type { IncomingMessage } from 'node:http';

export const SESSION_TASK_METHODS = ['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel'];
/** The server's `tasks` capability in a session's initialize. */
export const SESSION_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } };
export const STATUS_METHOD = 'notifications/tasks/status';
const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';
/** The one tool that can be called as a task: the others answer at once. */
export const TASK_TOOL = 'run';
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

type Notify = (method: string, params: Record<string, unknown>) => void;

export class SessionTasks {
  /**
   * The tasks this session made: each one's run (a run of its name by another session replaces a
   * finished task under the same id, and is not this session's), and the status its stream was
   * last told (or its create said).
   */
  private readonly owned = new Map<string, { run: string; status: string }>();
  /** What ends the watches of the session's tasks and of tasks/result calls that wait. */
  private readonly unwatches = new Set<() => void>();

  constructor(
    private readonly mcpTasks: McpTasks,
    private readonly push: TaskPush,
    private readonly notify: Notify,
  ) {}

  /** tools/call with params.task: runs `call` (run without waiting) and answers the task it started. */
  async create(params: Loose, call: (args: Loose) => Promise<CallToolResult>): Promise<unknown> {
    checkTaskParam(params.task);
    if (params.name !== TASK_TOOL)
      throw new RpcError(
        METHOD_NOT_FOUND,
        `Method not found: tool ${echoValue(params.name)} cannot be called as a task (params.task); only ${TASK_TOOL} can, the other tools answer at once`,
      );
    const args = isObject(params.arguments) ? params.arguments : {};
    const result = await call({ ...args, wait_seconds: 0 });
    const taskId = result.structuredContent.id;
    // Refused before a task existed (a bad command, a policy's no): the call's own answer.
    if (result.isError === true || typeof taskId !== 'string') return result;
    const task = this.mcpTasks.shown2025(taskId);
    this.owned.set(taskId, { run: this.mcpTasks.runOf(taskId)!, status: task.status as string });
    if (!TERMINAL.has(task.status as string)) this.watch(taskId);
    return { task };
  }

  /** Answers tasks/get, tasks/result, tasks/list or tasks/cancel of this session. */
  answer(method: string, params: Loose, from: IncomingMessage): unknown {
    if (method === 'tasks/list') return this.list(params);
    const taskId = this.ownTask(params.taskId);
    if (method === 'tasks/get') return this.mcpTasks.shown2025(taskId);
    if (method === 'tasks/result') return this.result(taskId, from);
    const task = this.mcpTasks.shown2025(taskId);
    if (TERMINAL.has(task.status as string))
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: task ${JSON.stringify(taskId)} of params.taskId has already ended (${String(task.status)}); only a working task can be cancelled`,
      );
    this.mcpTasks.cancel(taskId);
    // Its status said it was running: the answer tells the cancel instead (its end follows on the stream).
    const statusMessage = `task ${taskId} cancelled: its processes are sent SIGINT, and SIGKILL after the grace period`;
    return { ...task, status: 'cancelled', statusMessage };
  }

  /** Ends every watch (the session closed): a tasks/result still waiting is answered by nothing. */
  close(): void {
    for (const unwatch of this.unwatches) unwatch();
    this.unwatches.clear();
  }

  private list(params: Loose): unknown {
    if (params.cursor !== undefined)
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: params.cursor ${echoValue(params.cursor)} is no cursor of this server; tasks/list answers every task of the session at once, with no nextCursor`,
      );
    const tasks = [...this.owned.keys()].filter((id) => this.isOwn(id));
    return { tasks: tasks.map((id) => this.mcpTasks.shown2025(id)) };
  }

  /** tasks/result: waits for the task's end, then its run's result. */
  private async result(taskId: string, from: IncomingMessage): Promise<unknown> {
    await new Promise<void>((resolve) => {
      const unwatch = this.push.watch(taskId, (event) => {
        if (event.kind !== 'ended') return;
        this.unwatches.delete(unwatch);
        resolve();
      });
      this.unwatches.add(unwatch);
    });
    const result = this.mcpTasks.endResult(taskId, callerLeft(from));
    return { ...result, _meta: { [RELATED_TASK_META]: { taskId } } };
  }

  /** Tells the stream of each change of the task's status, once, until it ends. */
  private watch(taskId: string): void {
    const unwatch = this.push.watch(taskId, (event) => {
      if (event.kind === 'ended') this.unwatches.delete(unwatch);
      const task = this.isOwn(taskId) ? this.mcpTasks.shown2025(taskId) : null;
      const owned = this.owned.get(taskId);
      if (task === null || owned === undefined || task.status === owned.status) return;
      owned.status = task.status as string;
      this.notify(STATUS_METHOD, task);
    });
    this.unwatches.add(unwatch);
  }

  /** Whether task `taskId` is known and is the run this session made. */
  private isOwn(taskId: string): boolean {
    const owned = this.owned.get(taskId);
    return owned !== undefined && this.mcpTasks.runOf(taskId) === owned.run;
  }

  /** The task params.taskId names, when this session made it; else INVALID_PARAMS. */
  private ownTask(taskId: unknown): string {
    if (typeof taskId !== 'string')
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: params.taskId must be a string, the taskId a tools/call of ${TASK_TOOL} with params.task answered; got ${echoValue(taskId)}`,
      );
    if (!this.isOwn(taskId))
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: params.taskId ${echoValue(taskId)} names no task of this session (a task is seen only by the session whose ${TASK_TOOL} made it, until the retention period prunes it or a run of its name replaces it)`,
      );
    return taskId;
  }
}

/** Refuses a params.task that is not {ttl?: milliseconds}. */
function checkTaskParam(task: unknown): void {
  const ttl = isObject(task) ? task.ttl : undefined;
  if (!isObject(task) || (ttl !== undefined && ttl !== null && !(typeof ttl === 'number' && ttl >= 0)))
    throw new RpcError(
      INVALID_PARAMS,
      `Invalid params: params.task must be an object such as {"ttl": 60000} (ttl, optional: milliseconds to keep the result, a number from 0; the daemon keeps it for its retention period and says so); got ${echoValue(task)}`,
    );
}
