// The task registry: one SQLite row per task (by id), written on every change of its state,
// together with the todo that change causes (the outbox shares the database and the transaction).
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { TodoRequest } from '../../agent-socket/protocol.js';
import { TodoOutbox } from './todo-outbox.js';

export const TASK_STATES = ['pending', 'running', 'done', 'timed_out', 'killed', 'interrupted'] as const;
export type TaskState = (typeof TASK_STATES)[number];
export const FINISHED_STATES: readonly TaskState[] = ['done', 'timed_out', 'killed', 'interrupted'];

export interface TaskRecord {
  id: string;
  /** The caller's name, or null for a generated id. */
  name: string | null;
  command: string;
  cwd: string;
  /** Runs on a pseudo-terminal. */
  pty: boolean;
  /** Its stdin stays open for the input tool. */
  interactive: boolean;
  state: TaskState;
  runKey: string;
  timeoutMs: number | null;
  exitCode: number | null;
  signal: string | null;
  error: string | null;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  pid: number | null;
  pgid: number | null;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** CPU time of all the task's processes, from its cgroup; null without one or while running. */
  cpuMs: number | null;
  /** A todo for this task has been queued for the harness and not cleared since. */
  todoShown: boolean;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS tasks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  name TEXT,
  command TEXT NOT NULL,
  cwd TEXT NOT NULL,
  state TEXT NOT NULL,
  run_key TEXT NOT NULL,
  timeout_ms INTEGER,
  exit_code INTEGER,
  signal TEXT,
  error TEXT,
  created_at INTEGER NOT NULL,
  started_at INTEGER,
  ended_at INTEGER,
  pid INTEGER,
  pgid INTEGER,
  stdout_truncated INTEGER NOT NULL DEFAULT 0,
  stderr_truncated INTEGER NOT NULL DEFAULT 0,
  cpu_ms INTEGER,
  todo_shown INTEGER NOT NULL DEFAULT 0,
  pty INTEGER NOT NULL DEFAULT 0,
  interactive INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state, seq);
CREATE INDEX IF NOT EXISTS tasks_by_end ON tasks (ended_at) WHERE ended_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS finished_tasks_by_seq ON tasks (seq) WHERE state IN ('done', 'timed_out', 'killed', 'interrupted');
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
`;

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
});

const FINISHED_SQL = `('done', 'timed_out', 'killed', 'interrupted')`;

/** The registry in `<stateDir>/tasks.sqlite`. One connection, used from the main thread only. */
export class TaskStore {
  private readonly db: Database.Database;
  private readonly statements;
  readonly outbox: TodoOutbox;

  constructor(stateDir: string) {
    this.db = new Database(join(stateDir, 'tasks.sqlite'));
    this.db.pragma('journal_mode = WAL');
    // NORMAL survives a crash of the daemon; only a power loss can take the last commits.
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    this.migrate();
    this.outbox = new TodoOutbox(this.db);
    this.statements = this.prepare();
  }

  /** Brings a registry written by an older version up to this schema. */
  private migrate(): void {
    const columns = this.db.prepare<[], { name: string }>('PRAGMA table_info(tasks)').all().map((column) => column.name);
    if (!columns.includes('cpu_ms')) this.db.exec('ALTER TABLE tasks ADD COLUMN cpu_ms INTEGER');
    if (!columns.includes('todo_shown')) this.db.exec('ALTER TABLE tasks ADD COLUMN todo_shown INTEGER NOT NULL DEFAULT 0');
    if (!columns.includes('pty')) this.db.exec('ALTER TABLE tasks ADD COLUMN pty INTEGER NOT NULL DEFAULT 0');
    if (!columns.includes('interactive')) this.db.exec('ALTER TABLE tasks ADD COLUMN interactive INTEGER NOT NULL DEFAULT 0');
  }

  private prepare() {
    const db = this.db;
    return {
      get: db.prepare<[string], TaskRow>('SELECT * FROM tasks WHERE id = ?'),
      stateOf: db.prepare<[string], { state: TaskState; todo_shown: number }>('SELECT state, todo_shown FROM tasks WHERE id = ?'),
      remove: db.prepare<[string]>('DELETE FROM tasks WHERE id = ?'),
      insert: db.prepare(`INSERT INTO tasks (id, name, command, cwd, pty, interactive, state, run_key, timeout_ms, created_at)
        VALUES (@id, @name, @command, @cwd, @pty, @interactive, @state, @runKey, @timeoutMs, @createdAt)`),
      dispatched: db.prepare<[string]>(`UPDATE tasks SET state = 'running' WHERE id = ?`),
      started: db.prepare(`UPDATE tasks SET pid = @pid, pgid = @pgid, started_at = @startedAt WHERE id = @id`),
      ended: db.prepare(`UPDATE tasks SET state = @state, exit_code = @exitCode, signal = @signal, error = @error,
        ended_at = @endedAt, stdout_truncated = @stdoutTruncated, stderr_truncated = @stderrTruncated, cpu_ms = @cpuMs,
        todo_shown = @todoShown WHERE id = @id`),
      todoShown: db.prepare<[number, string]>('UPDATE tasks SET todo_shown = ? WHERE id = ?'),
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
      if (existing && !FINISHED_STATES.includes(existing.state)) return { busyState: existing.state };
      if (existing) this.statements.remove.run(record.id);
      if (existing?.todo_shown === 1) this.outbox.enqueue(clear);
      this.statements.insert.run({ ...record, pty: record.pty ? 1 : 0, interactive: record.interactive ? 1 : 0 });
      return { replaced: existing !== undefined };
    })();
  }

  /** The task has a slot and is being spawned. */
  markRunning(id: string): void {
    this.statements.dispatched.run(id);
  }

  /** The leader is running; `todo` (if any) is queued in the same transaction. */
  markStarted(record: TaskRecord, todo: TodoRequest | null): void {
    const { id, pid, pgid, startedAt } = record;
    this.withTodo(todo, () => this.statements.started.run({ id, pid, pgid, startedAt }));
  }

  /** The task reached a finished state (or a finished one changed); `todo` (if any) is queued in the same transaction. */
  markEnded(record: TaskRecord, todo: TodoRequest | null = null): void {
    this.withTodo(todo, () =>
      this.statements.ended.run({
        id: record.id,
        state: record.state,
        exitCode: record.exitCode,
        signal: record.signal,
        error: record.error,
        endedAt: record.endedAt,
        stdoutTruncated: record.stdoutTruncated ? 1 : 0,
        stderrTruncated: record.stderrTruncated ? 1 : 0,
        cpuMs: record.cpuMs,
        todoShown: record.todoShown ? 1 : 0,
      }),
    );
  }

  /** Queues `todo` and records whether the task's todo is now shown, in one transaction. */
  markTodo(record: TaskRecord, todo: TodoRequest): void {
    this.withTodo(todo, () => this.statements.todoShown.run(record.todoShown ? 1 : 0, record.id));
  }

  private withTodo(todo: TodoRequest | null, write: () => void): void {
    if (todo === null) return void write();
    this.db.transaction(() => {
      write();
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

  /** Tasks the registry shows as pending or running: at start-up, those the last daemon left behind. */
  /** The run key of every task in the registry. */
  listRunKeys(): string[] {
    return this.statements.runKeys.all().map((row) => row.run_key);
  }

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
