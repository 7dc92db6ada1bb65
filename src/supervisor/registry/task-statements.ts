// The registry's SQL, prepared once per connection: every statement TaskStore runs.
import type Database from 'better-sqlite3';
import type { TaskState } from '../../shared/task-states.js';
import { FINISHED_SQL } from './database.js';
import type { TaskRow } from './task-rows.js';

export type TaskStatements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: Database.Database) {
  return {
    get: db.prepare<[string], TaskRow>('SELECT * FROM tasks WHERE id = ?'),
    stateOf: db.prepare<[string], { state: TaskState; todo_shown: number }>(
      'SELECT state, todo_shown FROM tasks WHERE id = ?',
    ),
    remove: db.prepare<[string]>('DELETE FROM tasks WHERE id = ?'),
    insert:
      db.prepare(`INSERT INTO tasks (id, name, command, cwd, pty, interactive, state, run_key, timeout_ms, created_at,
      memory_limit_mb, max_processes, cpu_limit, sandbox, terminal_cols, terminal_rows)
      VALUES (@id, @name, @command, @cwd, @pty, @interactive, @state, @runKey, @timeoutMs, @createdAt, @memoryLimitMb, @maxProcesses, @cpuLimit, @sandbox,
      @terminalCols, @terminalRows)`),
    save: db.prepare(`UPDATE tasks SET state = @state, pid = @pid, pgid = @pgid, namespace_pid = @namespacePid, started_at = @startedAt, exit_code = @exitCode,
      signal = @signal, error = @error, ended_at = @endedAt, stdout_truncated = @stdoutTruncated,
      stderr_truncated = @stderrTruncated, cpu_ms = @cpuMs, todo_shown = @todoShown, oom_killed = @oomKilled,
      pids_limit_hits = @pidsLimitHits, memory_peak_bytes = @memoryPeakBytes, stdout_truncated_reason = @stdoutTruncatedReason,
      stderr_truncated_reason = @stderrTruncatedReason, exec_denials = @execDenials WHERE id = @id`),
    list: db.prepare<[number], TaskRow>('SELECT * FROM tasks ORDER BY seq DESC LIMIT ?'),
    listByState: db.prepare<[string, number], TaskRow>('SELECT * FROM tasks WHERE state = ? ORDER BY seq DESC LIMIT ?'),
    counts: db.prepare<[], { state: TaskState; count: number }>(
      'SELECT state, count(*) AS count FROM tasks GROUP BY state',
    ),
    unfinished: db.prepare<[], TaskRow>(`SELECT * FROM tasks WHERE state IN ('pending', 'running') ORDER BY seq`),
    runKeys: db.prepare<[], { run_key: string }>('SELECT run_key FROM tasks'),
    countFinished: db.prepare<[], { count: number }>(
      `SELECT count(*) AS count FROM tasks WHERE state IN ${FINISHED_SQL}`,
    ),
    expired: db.prepare<[number, number], { id: string }>(`SELECT id FROM tasks WHERE state IN ${FINISHED_SQL}
      AND (ended_at < ? OR seq <= (SELECT seq FROM tasks WHERE state IN ${FINISHED_SQL} ORDER BY seq DESC LIMIT 1 OFFSET ?))`),
    oldestFinished: db.prepare<[number], { id: string }>(
      `SELECT id FROM tasks INDEXED BY finished_tasks_by_seq WHERE state IN ${FINISHED_SQL} ORDER BY seq LIMIT ?`,
    ),
    counter: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE key = ?'),
    setCounter: db.prepare<[string, number]>(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
  };
}
