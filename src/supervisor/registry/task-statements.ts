// The registry's SQL, prepared once per connection: every statement TaskStore runs.
import type Database from 'better-sqlite3';
import type { TaskState } from '../../shared/task-states.js';
import { FINISHED_SQL } from './database.js';
import type { TaskRow } from './task-rows.js';

export type TaskStatements = ReturnType<typeof prepareStatements>;

/** A task's columns with its command, whole. */
const ROW = 'tasks.*, task_commands.command';
/** A task's columns with its command cut to the first `?` characters (the statement's first parameter). */
const ROW_CUT = 'tasks.*, substr(task_commands.command, 1, ?) AS command';

export function prepareStatements(db: Database.Database) {
  return {
    get: db.prepare<[string], TaskRow>(`SELECT ${ROW} FROM tasks JOIN task_commands USING (seq) WHERE id = ?`),
    stateOf: db.prepare<[string], { state: TaskState; todo_shown: number }>(
      'SELECT state, todo_shown FROM tasks WHERE id = ?',
    ),
    remove: db.prepare<[string]>('DELETE FROM tasks WHERE id = ?'),
    insert: db.prepare(`INSERT INTO tasks (id, name, cwd, pty, interactive, state, run_key, timeout_ms, created_at,
      memory_limit_mb, max_processes, cpu_limit, sandbox, terminal_cols, terminal_rows)
      VALUES (@id, @name, @cwd, @pty, @interactive, @state, @runKey, @timeoutMs, @createdAt, @memoryLimitMb, @maxProcesses, @cpuLimit, @sandbox,
      @terminalCols, @terminalRows)`),
    insertCommand: db.prepare<[number | bigint, string]>('INSERT INTO task_commands (seq, command) VALUES (?, ?)'),
    save: db.prepare(`UPDATE tasks SET state = @state, pid = @pid, pgid = @pgid, namespace_pid = @namespacePid, started_at = @startedAt, exit_code = @exitCode,
      signal = @signal, error = @error, ended_at = @endedAt, stdout_truncated = @stdoutTruncated,
      stderr_truncated = @stderrTruncated, cpu_ms = @cpuMs, todo_shown = @todoShown, oom_killed = @oomKilled,
      pids_limit_hits = @pidsLimitHits, memory_peak_bytes = @memoryPeakBytes, stdout_truncated_reason = @stdoutTruncatedReason,
      stderr_truncated_reason = @stderrTruncatedReason, exec_denials = @execDenials WHERE id = @id`),
    list: db.prepare<[number, number], TaskRow>(
      `SELECT ${ROW_CUT} FROM tasks JOIN task_commands USING (seq) ORDER BY seq DESC LIMIT ?`,
    ),
    listByState: db.prepare<[number, string, number], TaskRow>(
      `SELECT ${ROW_CUT} FROM tasks JOIN task_commands USING (seq) WHERE state = ? ORDER BY seq DESC LIMIT ?`,
    ),
    counts: db.prepare<[], { state: TaskState; count: number }>(
      'SELECT state, count(*) AS count FROM tasks GROUP BY state',
    ),
    // A page of seqs first, then their rows: each command is read only for the rows of the page.
    unfinishedPage: db.prepare<[number, number, number], TaskRow & { seq: number }>(
      `SELECT ${ROW_CUT} FROM (SELECT seq FROM tasks WHERE state IN ('pending', 'running') AND seq > ? ORDER BY seq LIMIT ?)
      JOIN tasks USING (seq) JOIN task_commands USING (seq) ORDER BY seq`,
    ),
    runKeys: db.prepare<[], { run_key: string }>('SELECT run_key FROM tasks'),
    countFinished: db.prepare<[], { count: number }>(
      `SELECT count(*) AS count FROM tasks WHERE state IN ${FINISHED_SQL}`,
    ),
    expired: db.prepare<[number, number, number], { id: string }>(`SELECT id FROM tasks WHERE state IN ${FINISHED_SQL}
      AND (ended_at < ? OR seq <= (SELECT seq FROM tasks WHERE state IN ${FINISHED_SQL} ORDER BY seq DESC LIMIT 1 OFFSET ?)) LIMIT ?`),
    oldestFinished: db.prepare<[number], { id: string }>(
      `SELECT id FROM tasks INDEXED BY finished_tasks_by_seq WHERE state IN ${FINISHED_SQL} ORDER BY seq LIMIT ?`,
    ),
    counter: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE key = ?'),
    setCounter: db.prepare<[string, number]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
  };
}
