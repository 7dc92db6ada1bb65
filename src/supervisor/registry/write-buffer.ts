// Registry writes not yet on disk: those of the current turn of the event loop, written together
// in one transaction at its end, and those a disk that cannot take writes refused (a full disk, a
// read-only or failing file system under the state dir), kept until it takes them again. The
// newest record per task and every todo in order; nothing is lost while the daemon lives.
import { errorCode } from '../../errors.js';
import type { TodoRequest } from '../../shared/todo-protocol.js';
import type { TaskRecord } from '../model/task.js';

/** SQLite's codes for a disk or file system that cannot take a write. */
const STORAGE_FAULT = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/;

/** Whether `error` says the disk under the registry cannot take writes now (rather than a bug). */
export function isStorageFault(error: unknown): boolean {
  return STORAGE_FAULT.test(errorCode(error));
}

export class WriteBuffer {
  private readonly records = new Map<string, TaskRecord>();
  private readonly todos: TodoRequest[] = [];
  /** Why the last attempt to write the buffer failed; null while the disk takes writes. */
  fault: string | null = null;

  get size(): number {
    return this.records.size + this.todos.length;
  }

  add(record: TaskRecord, todo: TodoRequest | null): void {
    this.records.set(record.id, record);
    if (todo !== null) this.todos.push(todo);
  }

  /** A buffered record, which is newer than the registry's row. */
  get(id: string): TaskRecord | undefined {
    return this.records.get(id);
  }

  /** Everything buffered, for a write inside a transaction; `clear` it once that transaction committed. */
  contents(): { records: Iterable<TaskRecord>; todos: readonly TodoRequest[] } {
    return { records: this.records.values(), todos: this.todos };
  }

  /** The buffer reached the disk: nothing is held any more. */
  clear(): void {
    this.records.clear();
    this.todos.length = 0;
    this.fault = null;
  }
}
