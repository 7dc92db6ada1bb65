// The task registry: one SQLite row per task (by id), written on every change of its state,
// together with the todo that change causes (the outbox shares the database and the transaction).
// The changes of one turn of the event loop, across all tasks, are written in one transaction at
// its end, or sooner when the registry is read or a caller is answered (`commit`).
import type Database from 'better-sqlite3';
import type { TodoRequest } from '../../shared/todo-protocol.js';
import { type TaskRecord } from '../model/task.js';
import { isFinished, TASK_STATES, type TaskState } from '../../shared/task-states.js';
import { openRegistry, type SetAsideRegistry } from './damaged-registry.js';
import { StateDirFullError } from '../../errors.js';
import { isStorageFault, WriteBuffer } from './write-buffer.js';
import { BoundedCache } from '../bounded-cache.js';
import { fromRow, toInsertRow, toSaveRow } from './task-rows.js';
import { prepareStatements, type TaskStatements } from './task-statements.js';
import { TodoOutbox } from './todo-outbox.js';

const FINISHED_CACHE_SIZE = 256;
/** Unfinished tasks a start reads at once: each page's commands, cut, are all it holds of them. */
const UNFINISHED_PAGE_ROWS = 256;

/** A task a start ended, with the todo that says so. */
export interface EndedTask {
  record: TaskRecord;
  todo: TodoRequest | null;
}

/** The registry in `<stateDir>/tasks.sqlite`. One connection, used from the main thread only. */
export class TaskStore {
  private readonly db: Database.Database;
  private readonly statements: TaskStatements;
  readonly outbox: TodoOutbox;
  /** The damaged registry this start set aside for a fresh one, or null. */
  readonly setAside: SetAsideRegistry | null;

  /** Writes not on disk yet: this turn's, or those a failing disk refused (then `fault` says why). */
  private readonly buffer = new WriteBuffer();
  private commitScheduled = false;
  /** Finished tasks read lately: a status of one reads the row once. */
  private readonly finished = new BoundedCache<string, TaskRecord>(FINISHED_CACHE_SIZE);
  /** The last generated id's N as the registry has it (read at the first insert), or null before. */
  private idCounter: number | null = null;

  /** After a set-aside, generated ids go on past task-`generatedIdsTaken()`: the forgotten tasks' output files keep theirs. */
  constructor(
    private readonly stateDir: string,
    generatedIdsTaken: () => number = () => 0,
  ) {
    ({ db: this.db, setAside: this.setAside } = openRegistry(stateDir));
    this.outbox = new TodoOutbox(this.db);
    this.statements = prepareStatements(this.db);
    if (this.setAside !== null) this.statements.setCounter.run('id_counter', generatedIdsTaken());
  }

  get(id: string): TaskRecord | null {
    const known = this.buffer.get(id) ?? this.finished.get(id);
    if (known) return known;
    const row = this.statements.get.get(id);
    if (!row) return null;
    const record = fromRow(row);
    if (isFinished(record.state)) this.finished.set(id, record);
    return record;
  }

  /** Why the registry cannot be written now (writes are held in memory meanwhile), or null. */
  get storageFault(): string | null {
    return this.buffer.fault;
  }

  /** How many records and todos wait in memory for the disk. */
  get heldWrites(): number {
    return this.buffer.fault === null ? 0 : this.buffer.size;
  }

  /** The tasks whose records wait in memory for the disk. */
  heldTaskIds(): string[] {
    return this.buffer.fault === null ? [] : [...this.buffer.contents().records].map((record) => record.id);
  }

  /**
   * Writes everything buffered now, in one transaction: before anything that depends on it leaves
   * the process (an answer to a caller), and by the storage watch while the disk refuses writes.
   * Returns false when the disk refused it (it stays held, and `storageFault` says why).
   */
  commit(): boolean {
    if (this.buffer.size === 0) return true;
    try {
      this.writeWithBuffered(() => {});
      return true;
    } catch (error) {
      this.holdOnFault(error);
      return false;
    }
  }

  /** Before a read of many rows: what this turn changed goes to disk first (a held write stays held, and its record overlays the row). */
  private flushBeforeRead(): void {
    if (this.buffer.fault === null) this.commit();
  }

  /**
   * A write transaction that carries the buffered writes too. A disk that cannot take it refuses
   * it with StateDirFullError: nothing was written, and the buffered writes are held.
   */
  private transact<T>(write: () => T): T {
    if (this.buffer.fault !== null) throw new StateDirFullError(this.stateDir, this.buffer.fault);
    try {
      return this.writeWithBuffered(write);
    } catch (error) {
      this.holdOnFault(error);
      throw new StateDirFullError(this.stateDir, (error as Error).message, { cause: error });
    }
  }

  /** One transaction: the buffered writes, then `write`; the buffer is emptied once it committed. */
  private writeWithBuffered<T>(write: () => T): T {
    const result = this.db.transaction(() => {
      const { records, todos } = this.buffer.contents();
      for (const record of records) this.statements.save.run(toSaveRow(record));
      for (const todo of todos) this.outbox.enqueue(todo);
      return write();
    })();
    this.buffer.clear();
    return result;
  }

  /** A storage fault holds the buffered writes until the disk takes them; anything else is a bug, thrown on. */
  private holdOnFault(error: unknown): void {
    if (!isStorageFault(error)) throw error;
    if (this.buffer.size > 0) this.buffer.fault ??= (error as Error).message;
  }

  /**
   * Adds a task named `name`, or under a fresh generated id (`task-N`) when it has none, replacing
   * a finished one of the same id (and clearing that one's todo, if shown). Returns the new record,
   * or the state of the task that holds the id instead when it is still pending or running.
   * Atomic: of two concurrent runs, one wins.
   */
  insert(
    name: string | null,
    build: (id: string) => TaskRecord,
    clear: (id: string) => TodoRequest,
  ): { id: string; busyState: TaskState } | { record: TaskRecord; replaced: boolean } {
    let counter: number | null = null;
    const admitted = this.transact(() => {
      // A generated id is one nextId found free: no row to look up again.
      const id = name ?? `task-${(counter = this.nextCounter())}`;
      this.finished.delete(id);
      const existing = name === null ? undefined : this.statements.stateOf.get(id);
      if (existing && !isFinished(existing.state)) return { id, busyState: existing.state };
      if (existing) this.statements.remove.run(id);
      if (existing?.todo_shown === 1) this.outbox.enqueue(clear(id));
      const record = build(id);
      const { lastInsertRowid } = this.statements.insert.run(toInsertRow(record));
      this.statements.insertCommand.run(lastInsertRowid, record.command);
      return { record, replaced: existing !== undefined };
    });
    if (counter !== null) this.idCounter = counter; // only once its transaction committed
    return admitted;
  }

  /**
   * Writes every changing field of `record`, with `todo` (if any) in the same transaction, at the
   * end of this turn of the event loop. Never throws for a full or failing disk: the write is held
   * in memory until `commit` gets it onto the disk.
   */
  save(record: TaskRecord, todo: TodoRequest | null): void {
    this.buffer.add(record, todo);
    // A finished record is its row once written: a status of it after the commit reads no row.
    if (isFinished(record.state)) this.finished.set(record.id, record);
    else this.finished.delete(record.id);
    if (this.buffer.fault !== null || this.commitScheduled) return;
    this.commitScheduled = true;
    setImmediate(() => {
      this.commitScheduled = false;
      if (this.buffer.fault === null) this.commit();
    });
  }

  /** The newest `limit` tasks (of `state`), each command cut to its first `commandChars` characters (buffered ones whole). */
  list(state: TaskState | null, limit: number, commandChars: number): TaskRecord[] {
    this.flushBeforeRead();
    const rows =
      state === null
        ? this.statements.list.all(commandChars, limit)
        : this.statements.listByState.all(commandChars, state, limit);
    return rows.map((row) => this.buffer.get(row.id) ?? fromRow(row));
  }

  countByState(): Record<TaskState, number> {
    this.flushBeforeRead();
    const counts = Object.fromEntries(TASK_STATES.map((state) => [state, 0])) as Record<TaskState, number>;
    for (const { state, count } of this.statements.counts.all()) counts[state] = count;
    return counts;
  }

  countFinished(): number {
    this.flushBeforeRead();
    return this.statements.countFinished.get()?.count ?? 0;
  }

  /** The run key of every task in the registry. */
  listRunKeys(): string[] {
    this.flushBeforeRead();
    return this.statements.runKeys.all().map((row) => row.run_key);
  }

  /**
   * At start-up, before anything else reads the registry: ends each task it shows as pending or
   * running (those the last daemon left behind) as `end` says, a page at a time in the order they
   * were run, each page written with its todos in one transaction. `end` gets each record with its
   * command cut to `commandChars` characters: a backlog of long commands is never held, nor read
   * whole. Returns how many were ended.
   */
  endUnfinished(commandChars: number, end: (record: TaskRecord) => EndedTask): number {
    this.flushBeforeRead();
    let count = 0;
    for (let after = 0; ;) {
      const rows = this.statements.unfinishedPage.all(commandChars, after, UNFINISHED_PAGE_ROWS);
      if (rows.length === 0) return count;
      if (!this.writeEnded(rows.map((row) => end(fromRow(row))))) {
        // Held in memory as save holds what the disk refuses, and a held record overlays its row: with its whole command.
        for (const row of rows) {
          const whole = end(fromRow(this.statements.get.get(row.id)!));
          this.save(whole.record, whole.todo);
        }
      }
      count += rows.length;
      after = rows.at(-1)!.seq;
    }
  }

  /** Writes `ended` at once, in one transaction; false when the disk refused it. */
  private writeEnded(ended: EndedTask[]): boolean {
    try {
      this.transact(() => {
        for (const { record, todo } of ended) {
          this.statements.save.run(toSaveRow(record));
          if (todo !== null) this.outbox.enqueue(todo);
        }
      });
      return true;
    } catch (error) {
      if (error instanceof StateDirFullError) return false;
      throw error;
    }
  }

  /** Deletes up to `most` finished tasks that ended before `endedBefore` or fall beyond the newest `keepCount`; returns their ids. */
  prune(endedBefore: number, keepCount: number, most: number): string[] {
    return this.removeTasks(() => this.statements.expired.all(endedBefore, keepCount, most));
  }

  /** Deletes the `count` oldest finished tasks (through their own index: a few rows read, not all); returns their ids. */
  pruneOldest(count: number): string[] {
    return this.removeTasks(() => this.statements.oldestFinished.all(count));
  }

  /** Deletes the tasks `select` picks, in one transaction; none while the disk refuses writes (they go once it takes them). */
  private removeTasks(select: () => Array<{ id: string }>): string[] {
    try {
      return this.transact(() => {
        const ids = select().map((row) => row.id);
        for (const id of ids) {
          this.statements.remove.run(id);
          this.finished.delete(id);
        }
        return ids;
      });
    } catch (error) {
      if (error instanceof StateDirFullError) return [];
      throw error;
    }
  }

  /**
   * The N of a fresh generated id (`task-N`) that no task in the registry holds; inside insert's
   * transaction. The counter is read from the registry once, then kept in memory.
   */
  private nextCounter(): number {
    let next = (this.idCounter ??= this.statements.counter.get('id_counter')?.value ?? 0);
    while (this.statements.stateOf.get(`task-${++next}`));
    this.statements.setCounter.run('id_counter', next);
    return next;
  }

  close(): void {
    this.commit();
    this.db.close();
  }
}
