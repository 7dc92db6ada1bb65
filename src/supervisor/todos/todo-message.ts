// What a task's todo says: a one-line summary and a body the agent can act on without another call.
// When a todo is shown, upserted or cleared is the lifecycle's rule (model/lifecycle.ts).
import { TODO_SOURCE, type TodoClear, type TodoRequest, type TodoUpsert } from '../../shared/todo-protocol.js';
import { NO_RESOURCES } from '../../process/resources.js';
import { describeSandbox } from '../../shared/sandbox.js';
import type { TaskRecord } from '../model/task.js';
import {
  describeStream,
  shortenCommand,
  snapshotTask,
  summarizeTask,
  type SnapshotSource,
} from '../model/task-snapshot.js';
import { type TaskSnapshot } from '../../shared/task-snapshot.js';

const TAIL_BYTES = 2048;
const TAIL_LINES = 20;
const SUMMARY_CHARS = 300;
/** The ports a todo names, the lowest first; it counts the rest. */
const PORTS_SHOWN = 10;

/**
 * What a todo's snapshot reads through `live` (the service's own source): only a task that ended by
 * itself can have lingering processes worth reporting (a kill, timeout or interruption is still escalating
 * when its end is reported: what it counts is about to die), and a todo shows no resource figures.
 */
export function todoSnapshotSource(live: SnapshotSource & { leftAtEnd(record: TaskRecord): number }): SnapshotSource {
  return {
    outputPaths: (id) => live.outputPaths(id),
    outputTails: (record, tailBytes) => live.outputTails(record, tailBytes),
    countLingering: (record) => (record.state === 'done' ? live.leftAtEnd(record) : 0),
    resourcesOf: () => NO_RESOURCES,
    portsOf: (record) => live.portsOf(record),
    stdinOpen: (record) => live.stdinOpen(record),
    policyOf: (record) => live.policyOf(record),
  };
}

/** The todo request for a lifecycle effect on `record`. */
export function composeTodo(record: TaskRecord, todo: 'upsert' | 'clear', source: SnapshotSource): TodoRequest {
  return todo === 'upsert' ? composeUpsert(record, source) : composeClear(record.id);
}

/** The upsert that shows `record` in its current state. */
export function composeUpsert(record: TaskRecord, source: SnapshotSource): TodoUpsert {
  const snapshot = snapshotTask(record, TAIL_BYTES, source);
  return {
    cmd: 'todo_upsert',
    source: TODO_SOURCE,
    key: record.id,
    state: record.state,
    summary: oneLine(`bash ${summarizeTask(snapshot)}`),
    body: composeBody(snapshot),
    updated_at: record.endedAt ?? record.startedAt ?? record.createdAt,
  };
}

/** The clear that removes the todo of task `id`. */
export function composeClear(id: string): TodoClear {
  return { cmd: 'todo_clear', source: TODO_SOURCE, key: id };
}

function composeBody(snapshot: TaskSnapshot): string {
  const lines = [
    `command: ${shortenCommand(snapshot.command)}`,
    `state: ${snapshot.state}`,
    `exit: ${describeExit(snapshot)}`,
  ];
  if (snapshot.error !== null) lines.push(`error: ${snapshot.error}`);
  if (snapshot.runtime_ms !== null) lines.push(`runtime: ${(snapshot.runtime_ms / 1000).toFixed(1)} s`);
  if (snapshot.sandbox !== null) lines.push(`sandbox: ${describeSandbox(snapshot.sandbox)}`);
  lines.push(...describePolicy(snapshot));
  if (snapshot.lingering > 0) lines.push(`still alive: ${snapshot.lingering} process(es) of the task (kill ends them)`);
  if (snapshot.ports.length > 0) {
    const shown = snapshot.ports.slice(0, PORTS_SHOWN);
    const rest = snapshot.ports.length - shown.length + snapshot.ports_unlisted;
    lines.push(
      `listening: ${shown.map((port) => `${port.protocol} ${port.address}:${port.port} (pid ${port.pid})`).join(', ')}${rest > 0 ? ` and ${rest} more` : ''}`,
    );
  }
  if ((snapshot.pids_limit_hits ?? 0) > 0)
    lines.push(`forks refused at max_processes ${snapshot.limits.max_processes}: ${snapshot.pids_limit_hits}`);
  for (const stream of ['stdout', 'stderr'] as const) {
    const tail = lastLines(snapshot[`${stream}_tail`]);
    lines.push(describeStream({ ...snapshot, [`${stream}_tail`]: tail }, stream));
    if (tail.length > 0) lines.push(tail.endsWith('\n') ? tail.slice(0, -1) : tail);
  }
  return lines.join('\n');
}

/** The execs the command policy refused (the last few, and how many), and those that wait for a person. */
function describePolicy(snapshot: TaskSnapshot): string[] {
  const policy = snapshot.policy;
  if (policy === undefined) return [];
  const rule = (index: number | null) => (index === null ? "the policy's default" : `rule ${index}`);
  const lines = policy.waiting.map(
    (exec) =>
      `waiting for approval: \`${exec.command}\` (${rule(exec.rule)}: ${exec.reason}); hive-bash approve ${exec.id} or hive-bash deny ${exec.id}`,
  );
  if (policy.denied_count > 0) {
    const shown = policy.denied.map((exec) => `\`${exec.command}\` (${rule(exec.rule)}: ${exec.reason})`);
    const earlier = policy.denied_count - policy.denied.length;
    lines.push(
      `policy denied ${policy.denied_count} exec(s): ${shown.join('; ')}${earlier > 0 ? ` (and ${earlier} earlier)` : ''}`,
    );
  }
  return lines;
}

function describeExit(snapshot: TaskSnapshot): string {
  if (snapshot.exit_code === null)
    return snapshot.state === 'running' || snapshot.state === 'pending' ? 'none yet' : 'none';
  return snapshot.signal === null
    ? `code ${snapshot.exit_code}`
    : `signal ${snapshot.signal} (code ${snapshot.exit_code})`;
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
