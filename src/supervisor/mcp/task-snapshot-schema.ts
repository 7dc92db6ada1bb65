// The task snapshot as run and status answer it: the snapshot's fields as an output schema (what an agent reads
// about each field), and the short text beside the structured content.
import { z } from 'zod';
import { TASK_STATES } from '../../shared/task-states.js';
import { describeStream, summarizeTask } from '../model/task-snapshot.js';
import { type TaskSnapshot } from '../../shared/task-snapshot.js';
import type { ReadinessOutcome } from '../readiness/readiness.js';
import { readStreamHead } from '../output/stream-head.js';
import { policySnapshotSchema } from './policy-snapshot-schema.js';

const isoTime = z.string().nullable();

/** A sandbox as status, list and the todo body show it. */
export const sandboxSnapshotSchema = z.object({
  write: z.array(z.string()).describe('The directories it may write beneath; everywhere else is read-only to it'),
  network: z.boolean().describe('false: its own network, loopback only'),
});

export const taskSnapshotSchema = z.object({
  id: z.string().describe('The task id: its name, or a generated task-N'),
  name: z.string().nullable().describe('The name given to run, or null'),
  command: z.string().describe('The command, run as bash -c COMMAND'),
  state: z.enum(TASK_STATES).describe('pending, running, done, timed_out, killed or interrupted'),
  pty: z.boolean().describe('Runs on a pseudo-terminal: all its output is in stdout'),
  interactive: z.boolean().describe('Started with interactive: true, for the input tool'),
  stdin_open: z.boolean().describe('Input can write to its stdin now (interactive, running, not closed with eof)'),
  exit_code: z
    .number()
    .int()
    .nullable()
    .describe(
      "The leader's exit code as a shell reports it (128+N after signal N); null while running or if it never ran",
    ),
  signal: z.string().nullable().describe('The signal that ended the leader, e.g. SIGKILL, or null'),
  error: z
    .string()
    .nullable()
    .describe(
      'Why the task could not run, was interrupted, or was killed at a limit ("killed by the kernel: out of memory (limit 512 MiB)"), or null',
    ),
  started_at: isoTime.describe('ISO 8601 time the task started, or null while pending'),
  ended_at: isoTime.describe('ISO 8601 time the task ended, or null'),
  runtime_ms: z.number().int().nullable().describe('Milliseconds from start to end (or to now while running)'),
  pid: z
    .number()
    .int()
    .nullable()
    .describe("The leader's process id as the host sees it: what an operator's ps, kill or hive-bash uses"),
  pgid: z.number().int().nullable().describe("The task's process group id as the host sees it"),
  namespace_pid: z
    .number()
    .int()
    .nullable()
    .describe(
      "The same leader's process id inside the tasks' own PID namespace: what a task's own ps, kill or $! uses; null when tasks share the host's",
    ),
  stdout_tail: z.string().describe('The last bytes of stdout, cut at character boundaries'),
  stderr_tail: z.string().describe('The last bytes of stderr, cut at character boundaries'),
  stdout_bytes: z.number().int().describe('Bytes of stdout kept in its file'),
  stderr_bytes: z.number().int().describe('Bytes of stderr kept in its file'),
  stdout_truncated: z.boolean().describe('True when stdout passed the cap and the rest was discarded'),
  stderr_truncated: z.boolean().describe('True when stderr passed the cap and the rest was discarded'),
  stdout_truncated_reason: z
    .string()
    .nullable()
    .describe('Why stdout was cut: the cap, a nearly full disk, a failed write; null when it was not'),
  stderr_truncated_reason: z.string().nullable().describe('Why stderr was cut; null when it was not'),
  stdout_path: z.string().describe('The file holding stdout'),
  stderr_path: z.string().describe('The file holding stderr'),
  lingering: z.number().int().describe('Processes of the task still alive after its leader exited (kill ends them)'),
  cpu_ms: z
    .number()
    .int()
    .nullable()
    .describe(
      "CPU time used by all of the task's processes so far (all of it once it has ended); null while pending, and after the end without the native addon",
    ),
  memory_bytes: z
    .number()
    .int()
    .nullable()
    .describe(
      "Memory the task uses now (its cgroup's memory.current, else the resident memory of its processes); null once ended",
    ),
  memory_peak_bytes: z
    .number()
    .int()
    .nullable()
    .describe('The most memory it used at once, where the kernel keeps that figure (cgroup memory.peak); else null'),
  processes: z
    .number()
    .int()
    .nullable()
    .describe('Processes of the task alive now (0 once nothing of it is left); null while pending'),
  sandbox: sandboxSnapshotSchema
    .nullable()
    .describe(
      "The sandbox in force (run's own, else the operator's default or floor), or null: the task may write wherever the daemon's user may, and reach any network",
    ),
  limits: z
    .object({
      memory_limit_mb: z.number().int().nullable().describe('Its memory cap in MiB, or null'),
      max_processes: z.number().int().nullable().describe('Its cap on processes and threads, or null'),
      cpu_limit: z.number().nullable().describe('The CPUs it may use, or null'),
    })
    .describe("The limits in force: the run's own, else the daemon's defaults"),
  oom_killed: z
    .boolean()
    .describe('The kernel ended it at its memory limit (all of it, not just the process that asked for more)'),
  pids_limit_hits: z
    .number()
    .int()
    .nullable()
    .describe('Forks refused at max_processes so far; null without that limit'),
  ports: z
    .array(
      z.object({
        protocol: z.enum(['tcp', 'udp']),
        address: z.string().describe('The local address, e.g. 0.0.0.0, ::, 127.0.0.1'),
        port: z.number().int(),
        pid: z.number().int().describe('The process that holds the socket'),
      }),
    )
    .describe(
      "The TCP and UDP ports its processes listen on now (a dev server's 3000, say), the first 100 by port; empty once it has ended",
    ),
  ports_unlisted: z
    .number()
    .int()
    .describe(
      'How many more ports its processes listen on than ports lists (it lists 100 at most); ss -tlnp lists them all',
    ),
  policy: policySnapshotSchema
    .optional()
    .describe(
      "What the operator's command policy did in the task (only where the daemon has one): the programs it refused, and those that wait for a person's approval",
    ),
});

// The schema describes the snapshot exactly: a field added to one and not the other fails to compile.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesSnapshot: Same<z.output<typeof taskSnapshotSchema>, TaskSnapshot> = true;
void schemaMatchesSnapshot;

/**
 * What run and status answer: by default the members an agent acts on (verbose: every member of
 * the snapshot, null where there is none).
 */
export const taskResultSchema = taskSnapshotSchema
  .partial()
  .required({ id: true, state: true })
  .extend({
    more: z
      .string()
      .optional()
      .describe(
        'Present when a tail is not all of its stream (stdout_bytes, stderr_bytes say how much there is): how to read the rest',
      ),
    notes: z
      .array(z.string())
      .optional()
      .describe(
        "Present when an exec of the task waits for a person's approval (who answers, how to wait), or an answer to one came too late",
      ),
  })
  .describe(
    'The task. By default only what to act on: members with nothing to say (null, false, no output, no process left) are left out, and so are the command, files, pids, times and limits; verbose: true gives every member.',
  );

/** Of a task's execs that wait for a person, the notes name this many at most (hive-bash approvals lists all). */
const APPROVAL_NOTES = 3;

/**
 * What a model is to know of a task's execs that wait for a person: who answers them (the
 * operator's command with the id), until when, and that a status wait waits through them.
 */
export function approvalNotes(snapshot: TaskSnapshot): string[] {
  const waiting = snapshot.policy?.waiting ?? [];
  const notes = waiting
    .slice(0, APPROVAL_NOTES)
    .map(
      (exec) =>
        `\`${exec.command}\` waits for a person's approval until ${exec.expires_at}, then is refused: the user approves it with \`hive-bash approve ${exec.id}\` (or refuses it with \`hive-bash deny ${exec.id}\`); status with wait_seconds waits through it for the decision and the task's end.`,
    );
  if (waiting.length > APPROVAL_NOTES)
    notes.push(`${waiting.length - APPROVAL_NOTES} more execs wait for approval; hive-bash approvals lists them.`);
  return notes;
}

type TaskResult = z.output<typeof taskResultSchema> & {
  wait_result?: ReadinessOutcome['result'];
  matched_line?: string | null;
};

/** A snapshot as run and status answer it (with what a readiness wait found), and its text. */
export function describeWaited(snapshot: TaskSnapshot, waited: ReadinessOutcome | null, verbose: boolean) {
  const text = describeTask(snapshot, verbose);
  if (waited === null) return { structured: shapeTask(snapshot, verbose), text };
  const outcome = waited.result === 'matched' ? `matched: ${waited.matchedLine}` : waited.result;
  const found = { wait_result: waited.result, matched_line: waited.matchedLine };
  const structured = { ...shapeTask(snapshot, verbose), ...found };
  return { structured, text: `wait_result ${outcome}\n${text}` };
}

/**
 * The snapshot as an agent needs it, in the order it acts on it: the state, how it ended, the
 * output's tails and how much more there is, and what is wrong (processes left, a limit hit).
 * Members at their defaults are left out; verbose gives the whole snapshot.
 */
export function shapeTask(snapshot: TaskSnapshot, verbose: boolean): TaskResult {
  const notes = approvalNotes(snapshot);
  if (verbose) return notes.length === 0 ? snapshot : { ...snapshot, notes };
  const result: TaskResult = { id: snapshot.id, state: snapshot.state };
  if (snapshot.exit_code !== null) result.exit_code = snapshot.exit_code;
  if (snapshot.signal !== null) result.signal = snapshot.signal;
  if (snapshot.error !== null) result.error = snapshot.error;
  if (snapshot.runtime_ms !== null) result.runtime_ms = snapshot.runtime_ms;
  let cut = false;
  for (const stream of ['stdout', 'stderr'] as const) {
    const tail = snapshot[`${stream}_tail`];
    if (tail.length > 0) result[`${stream}_tail`] = tail;
    if (snapshot[`${stream}_bytes`] > Buffer.byteLength(tail)) {
      result[`${stream}_bytes`] = snapshot[`${stream}_bytes`];
      cut = true;
    }
    if (snapshot[`${stream}_truncated`]) result[`${stream}_truncated`] = true;
    const reason = snapshot[`${stream}_truncated_reason`];
    if (reason !== null) result[`${stream}_truncated_reason`] = reason;
  }
  if (cut) result.more = `output {"id": "${snapshot.id}"} reads all of it; grep, head and tail pick lines`;
  if (snapshot.lingering > 0) result.lingering = snapshot.lingering;
  if (snapshot.oom_killed) result.oom_killed = true;
  if ((snapshot.pids_limit_hits ?? 0) > 0) result.pids_limit_hits = snapshot.pids_limit_hits;
  if (snapshot.stdin_open) result.stdin_open = true;
  if (snapshot.ports.length > 0) result.ports = snapshot.ports;
  if (snapshot.ports_unlisted > 0) result.ports_unlisted = snapshot.ports_unlisted;
  const policy = snapshot.policy;
  if (policy !== undefined && (policy.denied_count > 0 || policy.waiting.length > 0)) result.policy = policy;
  if (notes.length > 0) result.notes = notes;
  return result;
}

/**
 * The summary line and each non-empty tail, for the text content of run and status; a stream
 * longer than its tail shows its first lines too, and what lies between. Verbose names the files.
 */
export function describeTask(snapshot: TaskSnapshot, verbose: boolean): string {
  const parts = [summarizeTask(snapshot, verbose), ...approvalNotes(snapshot)];
  for (const stream of ['stdout', 'stderr'] as const) {
    const tail = snapshot[`${stream}_tail`];
    if (tail.length === 0) continue;
    const tailStart = snapshot[`${stream}_bytes`] - Buffer.byteLength(tail);
    const head = tailStart > 0 ? readStreamHead(`${snapshot.started_at}`, snapshot[`${stream}_path`], tailStart) : null;
    const between =
      head === null
        ? ''
        : `${head.text}[... ${head.betweenLines} lines (${head.betweenBytes} bytes) between; the output tool reads them ...]\n`;
    const header = verbose ? describeStream(snapshot, stream) : describeStreamBriefly(snapshot, stream);
    parts.push(`${header}\n${between}${tail}`);
  }
  return parts.join('\n');
}

/** `--- stdout`, with how much of it the tail is when not all, and a cut at the cap. */
function describeStreamBriefly(snapshot: TaskSnapshot, stream: 'stdout' | 'stderr'): string {
  const tailBytes = Buffer.byteLength(snapshot[`${stream}_tail`]);
  const bytes = snapshot[`${stream}_bytes`];
  const notes = [
    ...(tailBytes < bytes ? [`last ${tailBytes} of ${bytes} bytes`] : []),
    ...(snapshot[`${stream}_truncated`] ? ['truncated at the cap'] : []),
  ];
  return `--- ${stream}${notes.length > 0 ? ` (${notes.join(', ')})` : ''}`;
}
