// What a task's todo says: a one-line summary and a body the agent can act on without another call.
import { TODO_SOURCE, type TodoClear, type TodoUpsert } from '../../agent-socket/protocol.js';
import type { TaskRecord } from '../registry/task-store.js';
import { describeStream, summarizeTask, viewTask, type TaskView, type TaskViewSource } from '../mcp/task-view.js';

const TAIL_BYTES = 2048;
const TAIL_LINES = 20;
const COMMAND_CHARS = 2000;
const SUMMARY_CHARS = 300;

/** The upsert that shows `record` in its current state. */
export function composeUpsert(record: TaskRecord, source: TaskViewSource): TodoUpsert {
  const view = viewTask(record, TAIL_BYTES, source);
  return {
    cmd: 'todo_upsert',
    source: TODO_SOURCE,
    key: record.id,
    state: record.state,
    summary: oneLine(`bash ${summarizeTask(view)}`),
    body: composeBody(view),
    updated_at: record.endedAt ?? record.startedAt ?? record.createdAt,
  };
}

/** The clear that removes the todo of task `id`. */
export function composeClear(id: string): TodoClear {
  return { cmd: 'todo_clear', source: TODO_SOURCE, key: id };
}

function composeBody(view: TaskView): string {
  const command = view.command.length > COMMAND_CHARS
    ? `${view.command.slice(0, COMMAND_CHARS)}... (${view.command.length - COMMAND_CHARS} more characters)`
    : view.command;
  const lines = [`command: ${command}`, `state: ${view.state}`, `exit: ${describeExit(view)}`];
  if (view.error !== null) lines.push(`error: ${view.error}`);
  if (view.runtime_ms !== null) lines.push(`runtime: ${(view.runtime_ms / 1000).toFixed(1)} s`);
  if (view.lingering > 0) lines.push(`still alive: ${view.lingering} process(es) of the task (kill ends them)`);
  for (const stream of ['stdout', 'stderr'] as const) {
    const tail = lastLines(view[`${stream}_tail`]);
    lines.push(describeStream({ ...view, [`${stream}_tail`]: tail }, stream));
    if (tail.length > 0) lines.push(tail.endsWith('\n') ? tail.slice(0, -1) : tail);
  }
  return lines.join('\n');
}

function describeExit(view: TaskView): string {
  if (view.exit_code === null) return view.state === 'running' || view.state === 'pending' ? 'none yet' : 'none';
  return view.signal === null ? `code ${view.exit_code}` : `signal ${view.signal} (code ${view.exit_code})`;
}

function lastLines(text: string): string {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  const lines = body.split('\n');
  return lines.length <= TAIL_LINES ? text : `${lines.slice(-TAIL_LINES).join('\n')}${text.endsWith('\n') ? '\n' : ''}`;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ');
  return flat.length > SUMMARY_CHARS ? `${flat.slice(0, SUMMARY_CHARS - 3)}...` : flat;
}
