// subscriptions/listen of MCP 2026-07-28 for the Tasks extension: a POST whose response is a stream
// (server-sent events) that first acknowledges the task ids it will tell of, then carries a
// notifications/tasks with the whole task (as tasks/get shows it, its result not handed over) at
// once and at each change: an exec that begins or stops waiting for a person, and its end; as the
// client takes them (a task that changed again before it was told is told once, as it is then).
// The stream ends with the request's result once every task it tells of has ended, or when the
// client goes away. Nothing else is offered on it: the tools never change while the daemon runs.
import type { ServerResponse } from 'node:http';
import { echoValue } from '../../shared/echo.js';
import { INVALID_PARAMS, MISSING_CLIENT_CAPABILITY, refusal, RpcError, type RequestId } from './json-rpc.js';
import { isObject, type Loose } from './json-object.js';
import { declaresTasks, TASKS_EXTENSION, type McpTasks } from './mcp-tasks.js';
import { declaresElicitation } from './approval-inputs.js';
import type { TaskPush } from './task-push.js';

export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';
/** Task ids one listen may name at most. */
export const MAX_LISTENED_TASKS = 100;
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** The task ids a listen asks about, or the refusal of its params. */
export function listenedTasks(params: Loose, capabilities: Loose): string[] | RpcError {
  const notifications = params.notifications;
  if (!isObject(notifications))
    return new RpcError(
      INVALID_PARAMS,
      `Invalid params: subscriptions/listen needs params.notifications, an object of what to listen for ({"taskIds": ["task-1"]} here); got ${echoValue(notifications)}`,
    );
  const taskIds = notifications.taskIds ?? [];
  if (!Array.isArray(taskIds) || taskIds.length > MAX_LISTENED_TASKS || !taskIds.every((id) => typeof id === 'string'))
    return new RpcError(
      INVALID_PARAMS,
      `Invalid params: params.notifications.taskIds must be an array of at most ${MAX_LISTENED_TASKS} task ids (strings, the taskId a run answered with); got ${echoValue(taskIds)}`,
    );
  if (taskIds.length > 0 && !declaresTasks(capabilities))
    return refusal(
      MISSING_CLIENT_CAPABILITY,
      `Missing required client capability: notifications of tasks are part of the Tasks extension; declare it in params._meta["io.modelcontextprotocol/clientCapabilities"].extensions["${TASKS_EXTENSION}"] ({})`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  return [...new Set(taskIds)];
}

/** Serves a listen of request `id` for `taskIds` (listenedTasks'); resolves once its stream has ended. */
export function serveListen(
  res: ServerResponse,
  id: RequestId,
  taskIds: string[],
  capabilities: Loose,
  tasks: { mcpTasks: McpTasks; push: TaskPush },
): Promise<void> {
  const canAsk = declaresElicitation(capabilities);
  const honored = taskIds.filter((taskId) => tasks.mcpTasks.knows(taskId));
  const meta = { [SUBSCRIPTION_ID_META]: id };
  const send = (message: Loose) => res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  send({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: meta, notifications: { taskIds: honored } },
  });
  const open = new Set(honored);
  const unwatches: Array<() => void> = [];
  const end = () => {
    send({ jsonrpc: '2.0', id, result: { resultType: 'complete' } });
    res.end();
  };
  const tellNow = (taskId: string) => {
    const task = tasks.mcpTasks.notification(taskId, canAsk);
    if (res.writableEnded || !open.has(taskId)) return;
    if (task !== null) send({ jsonrpc: '2.0', method: 'notifications/tasks', params: { ...task, _meta: meta } });
    if (task === null || TERMINAL.has(task.status as string)) open.delete(taskId);
    if (open.size === 0) end();
  };
  // A task is told as the stream takes it, as it is then: one changed again meanwhile is told once,
  // so a client that reads slowly, or not at all, has the daemon hold one notification, not all.
  const changed = new Set<string>();
  const flush = () => {
    for (const taskId of changed) {
      if (res.writableNeedDrain || res.writableEnded) return;
      changed.delete(taskId);
      tellNow(taskId);
    }
  };
  res.on('drain', flush);
  const tell = (taskId: string) => {
    changed.add(taskId);
    flush();
  };
  return new Promise<void>((resolve) => {
    res.once('close', () => {
      for (const unwatch of unwatches) unwatch();
      resolve();
    });
    for (const taskId of honored) {
      tell(taskId);
      if (open.has(taskId)) unwatches.push(tasks.push.watch(taskId, () => tell(taskId)));
    }
    if (honored.length === 0) end();
  });
}
