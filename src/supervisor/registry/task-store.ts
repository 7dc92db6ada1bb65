// The task registry: one SQLite row per task (by id), written on every change of its state,
// together with the todo that change causes (the outbox shares the database and the transaction).
import type Database from 'better-sqlite3';
import type { TodoRequest } from '../../agent-socket/protocol.js';
import { isFinished, TASK_STATES, type TaskRecord, type TaskState } from '../model/task.js';
import { FINISHED_SQL, openDatabase } from './database.js';
import { StateDirFullError } from '../../errors.js';
import { HeldWrites, isStorageFault } from './held-writes.js';
import { fromRow, toSaveRow, type TaskRow } from './task-rows.js';
import { TodoOutbox } from './todo-outbox.js';

/** The registry in `<stateDir>/tasks.sqlite`. One connection, used from the main thread only. */
export class TaskStore {
  private readonly db: Database.Database;
  private readonly statements;
  readonly outbox: TodoOutbox;

  private readonly held = new HeldWrites();

  constructor(private readonly stateDir: string) {
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
        pids_limit_hits = @pidsLimitHits, memory_peak_bytes = @memoryPeakBytes, stdout_truncated_reason = @stdoutTruncatedReason,
        stderr_truncated_reason = @stderrTruncatedReason WHERE id = @id`),
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
    const held = this.held.get(id);
    if (held) return held;
    const row = this.statements.get.get(id);
    return row ? fromRow(row) : null;
  }

  /** Why the registry cannot be written now (writes are held in memory meanwhile), or null. */
  get storageFault(): string | null {
    return this.held.fault;
  }

  /** How many records and todos wait in memory for the disk. */
  get heldWrites(): number {
    return this.held.size;
  }

  /** Writes held since a storage fault, once the disk takes them; true when nothing is held any more. */
  flushHeld(): boolean {
    if (!this.held.active) return true;
    try {
      this.held.flush((records, todos) => this.db.transaction(() => {
        for (const record of records) this.statements.save.run(toSaveRow(record));
        for (const todo of todos) this.outbox.enqueue(todo);
      })());
      return true;
    } catch (error) {
      if (!isStorageFault(error)) throw error;
      return false;
    }
  }

  /** Runs a write that a full disk may refuse: then StateDirFullError, and nothing was written. */
  private refusable<T>(write: () => T): T {
    if (this.held.active) throw new StateDirFullError(this.stateDir, this.held.fault!);
    try {
      return write();
    } catch (error) {
      if (isStorageFault(error)) throw new StateDirFullError(this.stateDir, (error as Error).message, { cause: error });
      throw error;
    }
  }

  /**
   * Adds a task, replacing a finished one of the same id (and clearing that one's todo, if shown).
   * Returns the state of the task that holds the id instead when it is still pending or running.
   * Atomic: of two concurrent runs, one wins.
   */
  insert(record: TaskRecord, clear: TodoRequest): { busyState: TaskState } | { replaced: boolean } {
    return this.refusable(() => this.db.transaction(() => {
      const existing = this.statements.stateOf.get(record.id);
      if (existing && !isFinished(existing.state)) return { busyState: existing.state };
      if (existing) this.statements.remove.run(record.id);
      if (existing?.todo_shown === 1) this.outbox.enqueue(clear);
      this.statements.insert.run({ ...record, ...record.limits, pty: record.pty ? 1 : 0, interactive: record.interactive ? 1 : 0 });
      return { replaced: existing !== undefined };
    })());
  }

  /**
   * Writes every changing field of `record`; `todo` (if any) is queued in the same transaction.
   * Never throws for a full or failing disk: the write is held in memory until flushHeld takes it.
   */
  save(record: TaskRecord, todo: TodoRequest | null): void {
    if (this.held.active) return this.held.hold(record, todo, this.held.fault!);
    try {
      if (todo === null) return void this.statements.save.run(toSaveRow(record));
      this.db.transaction(() => {
        this.statements.save.run(toSaveRow(record));
        this.outbox.enqueue(todo);
      })();
    } catch (error) {
      if (!isStorageFault(error)) throw error;
      this.held.hold(record, todo, (error as Error).message);
    }
  }

  list(state: TaskState | null, limit: number): TaskRecord[] {
    const rows = state === null ? this.statements.list.all(limit) : this.statements.listByState.all(state, limit);
    return rows.map((row) => this.held.get(row.id) ?? fromRow(row));
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
    return this.refusable(() => this.db.transaction(() => {
      let next = this.statements.counter.get('id_counter')?.value ?? 0;
      let id: string;
      do id = `task-${++next}`;
      while (this.statements.stateOf.get(id));
      this.statements.setCounter.run('id_counter', next);
      return id;
    })());
  }

  close(): void {
    this.db.close();
  }
}
