// What a channel event (Claude Code's notifications/claude/channel) says of a task, as the todo
// says it to the harness: a line of summary, the command, and the first and last lines of its
// output, or the exec that waits for a person and how the operator answers it. Its meta (strings
// only, shown to the model as the attributes of the <channel> tag) names the task, its state and
// its exit code.
import { closeSync, openSync, readSync } from 'node:fs';
import type { TaskSnapshot } from '../../shared/task-snapshot.js';
import { shortenCommand, summarizeTask } from '../model/task-snapshot.js';

export const CHANNEL_METHOD = 'notifications/claude/channel';

/** What happened to a task a client holds: an exec of it began or stopped waiting for a person, or it ended. */
export type PushKind = 'asking' | 'answered' | 'ended';
/** Lines shown from the start and from the end of a stream; one stream's output of more is cut between them. */
const LINES_SHOWN = 5;
/** Bytes read from a stream's start for its first lines. */
const HEAD_BYTES = 2048;
const LINE_CHARS = 300;

export interface ChannelParams {
  content: string;
  meta: Record<string, string>;
}

/** The channel event of `kind` for the task `snapshot` shows; its output's first lines are read from `paths`. */
export function channelParams(
  kind: PushKind,
  snapshot: TaskSnapshot,
  paths: { stdout: string; stderr: string },
): ChannelParams {
  const meta: Record<string, string> = { event: kind === 'ended' ? 'task_ended' : 'approval_waiting' };
  meta.task_id = snapshot.id;
  meta.state = snapshot.state;
  if (snapshot.exit_code !== null) meta.exit_code = String(snapshot.exit_code);
  const lines = [`bash ${summarizeTask(snapshot, false)}`, `command: ${shortenCommand(snapshot.command)}`];
  if (kind === 'ended') {
    for (const stream of ['stdout', 'stderr'] as const) lines.push(...describeOutput(snapshot, stream, paths[stream]));
  } else {
    for (const exec of snapshot.policy?.waiting ?? [])
      lines.push(
        `waiting for approval: \`${exec.command}\` (${exec.reason}); the operator answers with hive-bash approve ${exec.id} or hive-bash deny ${exec.id}`,
      );
  }
  return { content: lines.join('\n'), meta };
}

/** A stream's lines: all of them when few, else the first and the last LINES_SHOWN with a count between. */
function describeOutput(snapshot: TaskSnapshot, stream: 'stdout' | 'stderr', path: string): string[] {
  const bytes = snapshot[`${stream}_bytes`];
  if (bytes === 0) return [];
  const tail = splitLines(snapshot[`${stream}_tail`]);
  const whole = Buffer.byteLength(snapshot[`${stream}_tail`]) >= bytes;
  if (whole && tail.length <= 2 * LINES_SHOWN) return [`${stream} (${tail.length} lines):`, ...tail.map(cut)];
  const head = splitLines(readHead(path)).slice(0, LINES_SHOWN);
  const last = tail.slice(-LINES_SHOWN);
  return [
    `${stream} (${bytes} bytes), first lines:`,
    ...head.map(cut),
    'last lines:',
    ...last.map(cut),
    `(output of the task's id reads the rest)`,
  ];
}

function readHead(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buffer = Buffer.alloc(HEAD_BYTES);
    return buffer.subarray(0, readSync(fd, buffer, 0, HEAD_BYTES, 0)).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function splitLines(text: string): string[] {
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  return body === '' ? [] : body.split('\n');
}

const cut = (line: string) => (line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS - 3)}...` : line);
