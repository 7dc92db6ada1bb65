// A task as run and status return it: the record, its output tails and what is left of it.
import { z } from 'zod';
import { FINISHED_STATES, TASK_STATES, type TaskRecord } from '../registry/task-store.js';
import { readTail } from '../tasks/output-tail.js';
import type { TaskResources } from '../../workers/task-resources.js';

export const DEFAULT_TAIL_BYTES = 4096;
export const MAX_TAIL_BYTES = 65_536;

const isoTime = z.string().nullable();

export const taskViewSchema = z.object({
  id: z.string().describe('The task id: its name, or a generated task-N'),
  name: z.string().nullable().describe('The name given to run, or null'),
  command: z.string().describe('The command, run as bash -c COMMAND'),
  state: z.enum(TASK_STATES).describe('pending, running, done, timed_out, killed or interrupted'),
  pty: z.boolean().describe('Runs on a pseudo-terminal: all its output is in stdout'),
  interactive: z.boolean().describe('Started with interactive: true, for the input tool'),
  stdin_open: z.boolean().describe('Input can write to its stdin now (interactive, running, not closed with eof)'),
  exit_code: z.number().int().nullable().describe("The leader's exit code as a shell reports it (128+N after signal N); null while running or if it never ran"),
  signal: z.string().nullable().describe('The signal that ended the leader, e.g. SIGKILL, or null'),
  error: z.string().nullable().describe('Why the task could not run or was interrupted, or null'),
  started_at: isoTime.describe('ISO 8601 time the task started, or null while pending'),
  ended_at: isoTime.describe('ISO 8601 time the task ended, or null'),
  runtime_ms: z.number().int().nullable().describe('Milliseconds from start to end (or to now while running)'),
  pid: z.number().int().nullable().describe("The leader's process id"),
  pgid: z.number().int().nullable().describe("The task's process group id"),
  stdout_tail: z.string().describe('The last bytes of stdout, cut at character boundaries'),
  stderr_tail: z.string().describe('The last bytes of stderr, cut at character boundaries'),
  stdout_bytes: z.number().int().describe('Bytes of stdout kept in its file'),
  stderr_bytes: z.number().int().describe('Bytes of stderr kept in its file'),
  stdout_truncated: z.boolean().describe('True when stdout passed the cap and the rest was discarded'),
  stderr_truncated: z.boolean().describe('True when stderr passed the cap and the rest was discarded'),
  stdout_path: z.string().describe('The file holding stdout'),
  stderr_path: z.string().describe('The file holding stderr'),
  lingering: z.number().int().describe('Processes of the task still alive after its leader exited (kill ends them)'),
  cpu_ms: z.number().int().nullable().describe('CPU time used by all of the task\'s processes, where the task has a cgroup; else null'),
  memory_bytes: z.number().int().nullable().describe('Memory the task uses now, where its cgroup has the memory controller; else null'),
  processes: z.number().int().nullable().describe('Processes of the task alive now, where the task has a cgroup; else null'),
});

export type TaskView = z.output<typeof taskViewSchema>;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Where a view finds a task's files, what is left of it and its figures (the TaskService is one). */
export interface TaskViewSource {
  outputPaths(id: string): { stdout: string; stderr: string };
  countLeftovers(record: TaskRecord): number;
  resourcesOf(record: TaskRecord): TaskResources;
  stdinOpen(record: TaskRecord): boolean;
}

/** Builds the view of `record`, reading the last `tailBytes` of each output file. */
export function viewTask(record: TaskRecord, tailBytes: number, tasks: TaskViewSource): TaskView {
  const paths = tasks.outputPaths(record.id);
  const stdout = readTail(paths.stdout, tailBytes);
  const stderr = readTail(paths.stderr, tailBytes);
  const finished = FINISHED_STATES.includes(record.state);
  const resources = tasks.resourcesOf(record);
  const runtimeEnd = record.endedAt ?? (record.startedAt === null ? null : Date.now());
  return {
    id: record.id,
    name: record.name,
    command: record.command,
    state: record.state,
    pty: record.pty,
    interactive: record.interactive,
    stdin_open: tasks.stdinOpen(record),
    exit_code: record.exitCode,
    signal: record.signal,
    error: record.error,
    started_at: iso(record.startedAt),
    ended_at: iso(record.endedAt),
    runtime_ms: record.startedAt === null || runtimeEnd === null ? null : Math.max(0, runtimeEnd - record.startedAt),
    pid: record.pid,
    pgid: record.pgid,
    stdout_tail: stdout.text,
    stderr_tail: stderr.text,
    stdout_bytes: stdout.bytes,
    stderr_bytes: stderr.bytes,
    stdout_truncated: record.stdoutTruncated,
    stderr_truncated: record.stderrTruncated,
    stdout_path: paths.stdout,
    stderr_path: paths.stderr,
    lingering: finished ? tasks.countLeftovers(record) : 0,
    cpu_ms: resources.cpuMs,
    memory_bytes: resources.memoryBytes,
    processes: resources.processes,
  };
}

/** One line: `task build-1 done: exit 0 after 12.3 s`. */
export function summarizeTask(view: TaskView): string {
  const seconds = view.runtime_ms === null ? '' : ` after ${(view.runtime_ms / 1000).toFixed(1)} s`;
  let outcome: string;
  if (view.state === 'pending') outcome = 'waiting for a free slot';
  else if (view.state === 'running') outcome = `pid ${view.pid ?? '?'}, running${seconds}${view.stdin_open ? ', stdin open for input' : ''}`;
  else if (view.error !== null && view.exit_code === null) outcome = `${view.error}${seconds}`;
  else if (view.signal !== null) outcome = `${view.signal} (exit ${view.exit_code})${seconds}`;
  else outcome = `exit ${view.exit_code}${seconds}`;
  const lingering = view.lingering > 0 ? `; ${view.lingering} process(es) still alive` : '';
  return `task ${view.id} ${view.state}: ${outcome}${lingering}`;
}

/** The summary line and each non-empty tail, for the text content of run and status. */
export function describeTask(view: TaskView): string {
  const parts = [summarizeTask(view)];
  for (const stream of ['stdout', 'stderr'] as const) {
    const tail = view[`${stream}_tail`];
    if (tail.length > 0) parts.push(`${describeStream(view, stream)}\n${tail}`);
  }
  return parts.join('\n');
}

/** `--- stdout (last 10 of 20 bytes): PATH`: a stream's header line, for the tail below it. */
export function describeStream(view: TaskView, stream: 'stdout' | 'stderr'): string {
  const tailBytes = Buffer.byteLength(view[`${stream}_tail`]);
  const bytes = view[`${stream}_bytes`];
  const cut = tailBytes < bytes ? `last ${tailBytes} of ${bytes} bytes` : `${bytes} bytes`;
  return `--- ${stream} (${cut}${view[`${stream}_truncated`] ? ', truncated at the cap' : ''}): ${view[`${stream}_path`]}`;
}
