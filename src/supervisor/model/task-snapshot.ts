// Makes a task's snapshot: its record with what only the moment knows (output tails and sizes, what
// is left of it, its resource figures), in the fields every reader gets (src/shared/task-snapshot.ts).
// The MCP snapshot and the todo message are both made from it.
import type { TaskResources } from '../../process/resources.js';
import { isFinished } from '../../shared/task-states.js';
import type { TaskPolicyView, TaskSnapshot } from '../../shared/task-snapshot.js';
import type { FoundPorts } from '../../process/ports.js';
import { readTail, type StreamTail } from '../output/output-tail.js';
import type { TaskRecord } from './task.js';

export const DEFAULT_TAIL_BYTES = 4096;
/** A todo, or a status of several tasks, shows a command's first this many characters. */
export const COMMAND_CHARS_SHOWN = 2000;
export { MAX_TAIL_BYTES } from '../../shared/tool-bounds.js';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** Where a snapshot finds a task's files, what is left of it and its figures. */
export interface SnapshotSource {
  outputPaths(id: string): { stdout: string; stderr: string };
  /** The last `tailBytes` of each of the task's output files, with their sizes. */
  outputTails(record: TaskRecord, tailBytes: number): OutputTails;
  countLingering(record: TaskRecord): number;
  resourcesOf(record: TaskRecord): TaskResources;
  /** The ports its processes listened on when last looked for. */
  portsOf(record: TaskRecord): FoundPorts;
  stdinOpen(record: TaskRecord): boolean;
  /** What the command policy did in the task, or null where the daemon has no policy. */
  policyOf(record: TaskRecord): TaskPolicyView | null;
}

export interface OutputTails {
  stdout: StreamTail;
  stderr: StreamTail;
}

/** The tails of the output files at `paths`, read now. */
export function readOutputTails(paths: { stdout: string; stderr: string }, tailBytes: number): OutputTails {
  return { stdout: readTail(paths.stdout, tailBytes), stderr: readTail(paths.stderr, tailBytes) };
}

/** The snapshot of `record`, with the last `tailBytes` of each output file. */
export function snapshotTask(record: TaskRecord, tailBytes: number, tasks: SnapshotSource): TaskSnapshot {
  const paths = tasks.outputPaths(record.id);
  const { stdout, stderr } = tasks.outputTails(record, tailBytes);
  const finished = isFinished(record.state);
  const resources = tasks.resourcesOf(record);
  const policy = tasks.policyOf(record);
  const ports = tasks.portsOf(record);
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
    namespace_pid: record.namespacePid,
    stdout_tail: stdout.text,
    stderr_tail: stderr.text,
    stdout_bytes: stdout.bytes,
    stderr_bytes: stderr.bytes,
    stdout_truncated: record.stdoutTruncated || stdout.replaced !== null,
    stderr_truncated: record.stderrTruncated || stderr.replaced !== null,
    stdout_truncated_reason: stdout.replaced ?? record.truncation.stdout,
    stderr_truncated_reason: stderr.replaced ?? record.truncation.stderr,
    stdout_path: paths.stdout,
    stderr_path: paths.stderr,
    lingering: finished ? tasks.countLingering(record) : 0,
    cpu_ms: resources.cpuMs,
    memory_bytes: resources.memoryBytes,
    memory_peak_bytes: resources.memoryPeakBytes,
    processes: resources.processes,
    sandbox: record.sandbox,
    limits: {
      memory_limit_mb: record.limits.memoryLimitMb,
      max_processes: record.limits.maxProcesses,
      cpu_limit: record.limits.cpuLimit,
    },
    oom_killed: record.oomKilled,
    pids_limit_hits: resources.pidsLimitHits,
    ports: ports.listed,
    ports_unlisted: ports.unlisted,
    ...(policy === null ? {} : { policy }),
  };
}

/** `command` as a todo or a status of several tasks shows it: its first COMMAND_CHARS_SHOWN characters, saying where it was cut. */
export function shortenCommand(command: string): string {
  return command.length > COMMAND_CHARS_SHOWN
    ? `${command.slice(0, COMMAND_CHARS_SHOWN)}... (cut at ${COMMAND_CHARS_SHOWN} characters; status of its id with verbose gives it whole)`
    : command;
}

/** One line: `task build-1 done: exit 0 after 12.3 s`; a running task's without its pid unless `withPid`. */
export function summarizeTask(snapshot: TaskSnapshot, withPid = true): string {
  const seconds = snapshot.runtime_ms === null ? '' : ` after ${(snapshot.runtime_ms / 1000).toFixed(1)} s`;
  let outcome: string;
  if (snapshot.state === 'pending') outcome = 'waiting for a free slot';
  else if (snapshot.state === 'running') {
    const so = snapshot.runtime_ms === null ? 'starting' : `${(snapshot.runtime_ms / 1000).toFixed(1)} s so far`;
    const progress = withPid ? `pid ${snapshot.pid ?? '?'}, running${seconds}` : so;
    outcome = `${progress}${snapshot.stdin_open ? ', stdin open for input' : ''}${describeWaiting(snapshot)}`;
  } else if (snapshot.error !== null && snapshot.exit_code === null) outcome = `${snapshot.error}${seconds}`;
  else if (snapshot.error !== null)
    outcome = `${snapshot.error}, ${snapshot.signal === null ? `exit ${snapshot.exit_code}` : `${snapshot.signal} (exit ${snapshot.exit_code})`}${seconds}`;
  else if (snapshot.signal !== null) outcome = `${snapshot.signal} (exit ${snapshot.exit_code})${seconds}`;
  else outcome = `exit ${snapshot.exit_code}${seconds}`;
  const lingering = snapshot.lingering > 0 ? `; ${snapshot.lingering} process(es) still alive` : '';
  return `task ${snapshot.id} ${snapshot.state}: ${outcome}${lingering}`;
}

/** `, waiting for approval: git push (hive-bash approve 3f9a0c1e)`: the execs of a running task that wait for a person. */
function describeWaiting(snapshot: TaskSnapshot): string {
  const waiting = snapshot.policy?.waiting ?? [];
  if (waiting.length === 0) return '';
  const first = waiting[0]!;
  const more = waiting.length > 1 ? ` and ${waiting.length - 1} more` : '';
  return `, waiting for approval: \`${first.command}\` (hive-bash approve ${first.id} or deny ${first.id})${more}`;
}

/** `--- stdout (last 10 of 20 bytes): PATH`: a stream's header line, for the tail below it. */
export function describeStream(snapshot: TaskSnapshot, stream: 'stdout' | 'stderr'): string {
  const tailBytes = Buffer.byteLength(snapshot[`${stream}_tail`]);
  const bytes = snapshot[`${stream}_bytes`];
  const cut = tailBytes < bytes ? `last ${tailBytes} of ${bytes} bytes` : `${bytes} bytes`;
  return `--- ${stream} (${cut}${snapshot[`${stream}_truncated`] ? ', truncated at the cap' : ''}): ${snapshot[`${stream}_path`]}`;
}
