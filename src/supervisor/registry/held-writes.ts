// Writes the registry could not take (a full disk, a read-only or failing file system under the
// state dir): held in memory, the newest record per task and every todo in order, and written
// together once the disk takes them again. Nothing is lost while the daemon lives.
import type { TodoRequest } from '../../agent-socket/protocol.js';
import type { TaskRecord } from '../model/task.js';

/** SQLite's codes for a disk or file system that cannot take a write. */
const STORAGE_FAULT = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/;

/** Whether `error` says the disk under the registry cannot take writes now (rather than a bug). */
export function isStorageFault(error: unknown): boolean {
  return STORAGE_FAULT.test(String((error as { code?: unknown }).code ?? ''));
}

export class HeldWrites {
  private readonly records = new Map<string, TaskRecord>();
  private readonly todos: TodoRequest[] = [];
  /** Why the last write failed, while anything is held. */
  fault: string | null = null;

  get active(): boolean {
    return this.fault !== null;
  }

  get size(): number {
    return this.records.size + this.todos.length;
  }

  hold(record: TaskRecord, todo: TodoRequest | null, fault: string): void {
    this.records.set(record.id, record);
    if (todo !== null) this.todos.push(todo);
    this.fault ??= fault;
  }

  /** A held record, which is newer than the registry's row. */
  get(id: string): TaskRecord | undefined {
    return this.records.get(id);
  }

  /** Writes everything held through `write` (one transaction); on success nothing is held any more. */
  flush(write: (records: TaskRecord[], todos: TodoRequest[]) => void): void {
    write([...this.records.values()], this.todos);
    this.records.clear();
    this.todos.length = 0;
    this.fault = null;
  }
}
