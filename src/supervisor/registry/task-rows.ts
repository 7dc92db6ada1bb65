// A task's SQLite row and its record: the columns as stored, and the conversions both ways.
import type { Sandbox } from '../../shared/sandbox.js';
import { NO_DENIALS, type ExecDenials } from '../model/exec-denials.js';
import type { TaskRecord } from '../model/task.js';
import type { TaskState } from '../../shared/task-states.js';

export interface TaskRow {
  id: string;
  name: string | null;
  command: string;
  cwd: string;
  state: TaskState;
  run_key: string;
  timeout_ms: number | null;
  exit_code: number | null;
  signal: string | null;
  error: string | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  pid: number | null;
  pgid: number | null;
  namespace_pid: number | null;
  sandbox: string | null;
  stdout_truncated: number;
  stderr_truncated: number;
  cpu_ms: number | null;
  todo_shown: number;
  pty: number;
  interactive: number;
  terminal_cols: number | null;
  terminal_rows: number | null;
  memory_limit_mb: number | null;
  max_processes: number | null;
  cpu_limit: number | null;
  oom_killed: number;
  pids_limit_hits: number | null;
  memory_peak_bytes: number | null;
  stdout_truncated_reason: string | null;
  stderr_truncated_reason: string | null;
  exec_denials: string | null;
}

export const fromRow = (row: TaskRow): TaskRecord => ({
  id: row.id,
  name: row.name,
  command: row.command,
  cwd: row.cwd,
  pty: row.pty === 1,
  terminalSize:
    row.terminal_cols === null || row.terminal_rows === null
      ? null
      : { cols: row.terminal_cols, rows: row.terminal_rows },
  interactive: row.interactive === 1,
  state: row.state,
  runKey: row.run_key,
  timeoutMs: row.timeout_ms,
  exitCode: row.exit_code,
  signal: row.signal,
  error: row.error,
  createdAt: row.created_at,
  startedAt: row.started_at,
  endedAt: row.ended_at,
  pid: row.pid,
  pgid: row.pgid,
  namespacePid: row.namespace_pid,
  stdoutTruncated: row.stdout_truncated === 1,
  stderrTruncated: row.stderr_truncated === 1,
  cpuMs: row.cpu_ms,
  todoShown: row.todo_shown === 1,
  limits: { memoryLimitMb: row.memory_limit_mb, maxProcesses: row.max_processes, cpuLimit: row.cpu_limit },
  sandbox: row.sandbox === null ? null : (JSON.parse(row.sandbox) as Sandbox),
  oomKilled: row.oom_killed === 1,
  pidsLimitHits: row.pids_limit_hits,
  memoryPeakBytes: row.memory_peak_bytes,
  truncation: { stdout: row.stdout_truncated_reason, stderr: row.stderr_truncated_reason },
  denials: row.exec_denials === null ? NO_DENIALS : (JSON.parse(row.exec_denials) as ExecDenials),
});

/** The columns insert writes: what run decided of a new task. */
export const toInsertRow = (record: TaskRecord) => ({
  ...record,
  ...record.limits,
  terminalCols: record.terminalSize?.cols ?? null,
  terminalRows: record.terminalSize?.rows ?? null,
  sandbox: record.sandbox === null ? null : JSON.stringify(record.sandbox),
  pty: record.pty ? 1 : 0,
  interactive: record.interactive ? 1 : 0,
});

/** The columns save writes. */
export const toSaveRow = (record: TaskRecord) => ({
  id: record.id,
  state: record.state,
  pid: record.pid,
  pgid: record.pgid,
  namespacePid: record.namespacePid,
  startedAt: record.startedAt,
  exitCode: record.exitCode,
  signal: record.signal,
  error: record.error,
  endedAt: record.endedAt,
  stdoutTruncated: record.stdoutTruncated ? 1 : 0,
  stderrTruncated: record.stderrTruncated ? 1 : 0,
  cpuMs: record.cpuMs,
  todoShown: record.todoShown ? 1 : 0,
  oomKilled: record.oomKilled ? 1 : 0,
  pidsLimitHits: record.pidsLimitHits,
  memoryPeakBytes: record.memoryPeakBytes,
  stdoutTruncatedReason: record.truncation.stdout,
  stderrTruncatedReason: record.truncation.stderr,
  execDenials: record.denials.count === 0 ? null : JSON.stringify(record.denials),
});
