// The task registry: one SQLite row per task (by id), written on every change of its state,
// together with the todo that change causes (the outbox shares the database and the transaction).
import type Database from 'better-sqlite3';
import type { TodoRequest } from '../../agent-socket/protocol.js';
import { isFinished, TASK_STATES, type TaskRecord, type TaskState } from '../model/task.js';
import { FINISHED_SQL, openDatabase } from './database.js';
import { TodoOutbox } from './todo-outbox.js';

interface TaskRow {
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
  stdout_truncated: number;
  stderr_truncated: number;
  cpu_ms: number | null;
  todo_shown: number;
  pty: number;
  interactive: number;
  memory_limit_mb: number | null;
  max_processes: number | null;
  cpu_limit: number | null;
  oom_killed: number;
  pids_limit_hits: number | null;
  memory_peak_bytes: number | null;
}

const fromRow = (row: TaskRow): TaskRecord => ({
  id: row.id,
  name: row.name,
  command: row.command,
  cwd: row.cwd,
  pty: row.pty === 1,
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
  stdoutTruncated: row.stdout_truncated === 1,
  stderrTruncated: row.stderr_truncated === 1,
  cpuMs: row.cpu_ms,
  todoShown: row.todo_shown === 1,
  limits: { memoryLimitMb: row.memory_limit_mb, maxProcesses: row.max_processes, cpuLimit: row.cpu_limit },
  oomKilled: row.oom_killed === 1,
  pidsLimitHits: row.pids_limit_hits,
  memoryPeakBytes: row.memory_peak_bytes,
});

/** The registry in `<stateDir>/tasks.sqlite`. One connection, used from the main thread only. */
export class TaskStore {
  private readonly db: Database.Database;
  private readonly statements;
  readonly outbox: TodoOutbox;

  constructor(stateDir: string) {
    this.db = openDatabase(stateDir);
    this.outbox = new TodoOutbox(this.db);
    this.statements = this.prepare();
  }

  private prepare() {
    const db = this.db;
    return {
      get: db.prepare<[string], TaskRow>('SELECT * FROM tasks WHERE id = ?'),
      stateOf: db.prepare<[string], { state: TaskState; todo_shown: number }>('SELECT state, todo_shown FROM tasks WHERE id = ?'),
      remove: db.prepare<[string]>('DELETE FROM tasks WHERE id = ?'),
      insert: db.prepare(`INSERT INTO tasks (id, name, command, cwd, pty, interactive, state, run_key, timeout_ms, created_at,
        memory_limit_mb, max_processes, cpu_limit)
        VALUES (@id, @name, @command, @cwd, @pty, @interactive, @state, @runKey, @timeoutMs, @createdAt, @memoryLimitMb, @maxProcesses, @cpuLimit)`),
      save: db.prepare(`UPDATE tasks SET state = @state, pid = @pid, pgid = @pgid, started_at = @startedAt, exit_code = @exitCode,
        signal = @signal, error = @error, ended_at = @endedAt, stdout_truncated = @stdoutTruncated,
        stderr_truncated = @stderrTruncated, cpu_ms = @cpuMs, todo_shown = @todoShown, oom_killed = @oomKilled,
        pids_limit_hits = @pidsLimitHits, memory_peak_bytes = @memoryPeakBytes WHERE id = @id`),
      list: db.prepare<[number], TaskRow>('SELECT * FROM tasks ORDER BY seq DESC LIMIT ?'),
      listByState: db.prepare<[string, number], TaskRow>('SELECT * FROM tasks WHERE state = ? ORDER BY seq DESC LIMIT ?'),
      counts: db.prepare<[], { state: TaskState; count: number }>('SELECT state, count(*) AS count FROM tasks GROUP BY state'),
      unfinished: db.prepare<[], TaskRow>(`SELECT * FROM tasks WHERE state IN ('pending', 'running') ORDER BY seq`),
      runKeys: db.prepare<[], { run_key: string }>('SELECT run_key FROM tasks'),
      countFinished: db.prepare<[], { count: number }>(`SELECT count(*) AS count FROM tasks WHERE state IN ${FINISHED_SQL}`),
      expired: db.prepare<[number, number], { id: string }>(`SELECT id FROM tasks WHERE state IN ${FINISHED_SQL}
        AND (ended_at < ? OR seq <= (SELECT seq FROM tasks WHERE state IN ${FINISHED_SQL} ORDER BY seq DESC LIMIT 1 OFFSET ?))`),
      oldestFinished: db.prepare<[number], { id: string }>(`SELECT id FROM tasks INDEXED BY finished_tasks_by_seq WHERE state IN ${FINISHED_SQL} ORDER BY seq LIMIT ?`),
      counter: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE key = ?'),
      setCounter: db.prepare<[string, number]>('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    };
  }

  get(id: string): TaskRecord | null {
    const row = this.statements.get.get(id);
    return row ? fromRow(row) : null;
  }

  /**
   * Adds a task, replacing a finished one of the same id (and clearing that one's todo, if shown).
   * Returns the state of the task that holds the id instead when it is still pending or running.
   * Atomic: of two concurrent runs, one wins.
   */
  insert(record: TaskRecord, clear: TodoRequest): { busyState: TaskState } | { replaced: boolean } {
    return this.db.transaction(() => {
      const existing = this.statements.stateOf.get(record.id);
      if (existing && !isFinished(existing.state)) return { busyState: existing.state };
      if (existing) this.statements.remove.run(record.id);
      if (existing?.todo_shown === 1) this.outbox.enqueue(clear);
      this.statements.insert.run({ ...record, ...record.limits, pty: record.pty ? 1 : 0, interactive: record.interactive ? 1 : 0 });
      return { replaced: existing !== undefined };
    })();
  }

  /** Writes every changing field of `record`; `todo` (if any) is queued in the same transaction. */
  save(record: TaskRecord, todo: TodoRequest | null): void {
    const row = {
      id: record.id,
      state: record.state,
      pid: record.pid,
      pgid: record.pgid,
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
    };
    if (todo === null) return void this.statements.save.run(row);
    this.db.transaction(() => {
      this.statements.save.run(row);
      this.outbox.enqueue(todo);
    })();
  }

  list(state: TaskState | null, limit: number): TaskRecord[] {
    const rows = state === null ? this.statements.list.all(limit) : this.statements.listByState.all(state, limit);
    return rows.map(fromRow);
  }

  countByState(): Record<TaskState, number> {
    const counts = Object.fromEntries(TASK_STATES.map((state) => [state, 0])) as Record<TaskState, number>;
    for (const { state, count } of this.statements.counts.all()) counts[state] = count;
    return counts;
  }

  countFinished(): number {
    return this.statements.countFinished.get()?.count ?? 0;
  }

  /** The run key of every task in the registry. */
  listRunKeys(): string[] {
    return this.statements.runKeys.all().map((row) => row.run_key);
  }

  /** Tasks the registry shows as pending or running: at start-up, those the last daemon left behind. */
  listUnfinished(): TaskRecord[] {
    return this.statements.unfinished.all().map(fromRow);
  }

  /** Deletes finished tasks that ended before `endedBefore` or fall beyond the newest `keepCount`; returns their ids. */
  prune(endedBefore: number, keepCount: number): string[] {
    return this.db.transaction(() => {
      const ids = this.statements.expired.all(endedBefore, keepCount).map((row) => row.id);
      for (const id of ids) this.statements.remove.run(id);
      return ids;
    })();
  }

  /** Deletes the `count` oldest finished tasks (through their own index: a few rows read, not all); returns their ids. */
  pruneOldest(count: number): string[] {
    return this.db.transaction(() => {
      const ids = this.statements.oldestFinished.all(count).map((row) => row.id);
      for (const id of ids) this.statements.remove.run(id);
      return ids;
    })();
  }

  /** A fresh generated id (`task-N`) that no task in the registry holds. */
  generateId(): string {
    return this.db.transaction(() => {
      let next = this.statements.counter.get('id_counter')?.value ?? 0;
      let id: string;
      do id = `task-${++next}`;
      while (this.statements.stateOf.get(id));
      this.statements.setCounter.run('id_counter', next);
      return id;
    })();
  }

  close(): void {
    this.db.close();
  }
}
