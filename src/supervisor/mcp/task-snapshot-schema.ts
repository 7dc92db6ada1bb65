// The task snapshot as run and status answer it: the snapshot's fields as an output schema (what an agent reads
// about each field), and the short text beside the structured content.
import { z } from 'zod';
import { TASK_STATES } from '../model/task.js';
import { describeStream, summarizeTask, type TaskSnapshot } from '../model/task-snapshot.js';
import type { ReadinessOutcome } from '../readiness/readiness.js';
import { readStreamHead } from '../output/stream-head.js';

const isoTime = z.string().nullable();

/** A sandbox as status, list and the todo body show it. */
export const sandboxSnapshotSchema = z.object({
  write: z.array(z.string()).describe('The directories it may write beneath; everywhere else is read-only to it'),
  network: z.boolean().describe('false: its own network, loopback only'),
});

const ruleIndex = z
  .number()
  .int()
  .nullable()
  .describe("The rule's index in the operator's policy file, or null for the policy's default");
const execFields = {
  command: z.string().describe('The program (its file name) and its arguments, as the task ran them'),
  program: z.string().describe('The path of the program executed'),
  rule: ruleIndex,
  reason: z.string().describe("Why, in the operator's words"),
};

/** What the command policy did in a task, as status shows it. */
const policySnapshotSchema = z.object({
  denied: z
    .array(z.object({ ...execFields, at: z.string().describe('ISO 8601 time it was refused') }))
    .describe('The last programs the policy refused (each failed with "Permission denied", exit 126 from a shell)'),
  denied_count: z.number().int().describe('How many execs the policy refused in all'),
  waiting: z
    .array(
      z.object({
        id: z.string().describe('What hive-bash approve and hive-bash deny take'),
        ...execFields,
        asked_at: z.string().describe('ISO 8601 time it began to wait'),
        expires_at: z.string().describe('ISO 8601 time it is refused if no one answers'),
      }),
    )
    .describe('Programs that wait, blocked, for a person to approve or deny them'),
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
    .describe("The TCP and UDP ports its processes listen on now (a dev server's 3000, say); empty once it has ended"),
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

/** A snapshot with what a readiness wait found, and its text (the outcome first). */
export function describeWaited(snapshot: TaskSnapshot, waited: ReadinessOutcome | null) {
  if (waited === null) return { structured: snapshot, text: describeTask(snapshot) };
  const outcome = waited.result === 'matched' ? `matched: ${waited.matchedLine}` : waited.result;
  return {
    structured: { ...snapshot, wait_result: waited.result, matched_line: waited.matchedLine },
    text: `wait_result ${outcome}\n${describeTask(snapshot)}`,
  };
}

/**
 * The summary line and each non-empty tail, for the text content of run and status; a stream
 * longer than its tail shows its first lines too, and what lies between.
 */
export function describeTask(snapshot: TaskSnapshot): string {
  const parts = [summarizeTask(snapshot)];
  for (const stream of ['stdout', 'stderr'] as const) {
    const tail = snapshot[`${stream}_tail`];
    if (tail.length === 0) continue;
    const tailStart = snapshot[`${stream}_bytes`] - Buffer.byteLength(tail);
    const head = tailStart > 0 ? readStreamHead(`${snapshot.started_at}`, snapshot[`${stream}_path`], tailStart) : null;
    const between =
      head === null
        ? ''
        : `${head.text}[... ${head.betweenLines} lines (${head.betweenBytes} bytes) between; the output tool reads them ...]\n`;
    parts.push(`${describeStream(snapshot, stream)}\n${between}${tail}`);
  }
  return parts.join('\n');
}
