// The todo outbox: one row per todo key holding the latest operation not yet acknowledged by the
// harness. It lives in the registry's database so that a state change and the todo it causes are
// written in one transaction (TaskStore calls `enqueue` inside its own transactions).
import type Database from 'better-sqlite3';
import type { TodoRequest } from '../../shared/todo-protocol.js';
import { isStorageFault } from './write-buffer.js';

/** One queued operation; `version` grows with every enqueue, so a newer operation on a key is told apart. */
export interface OutboxEntry {
  key: string;
  version: number;
  /** The request exactly as it goes on the wire, without the newline. */
  line: string;
}

export class TodoOutbox {
  private readonly statements;
  private lastVersion: number;
  private readonly listeners: Array<() => void> = [];

  constructor(db: Database.Database) {
    this.statements = {
      upsert:
        db.prepare(`INSERT INTO todo_outbox (key, version, line, queued_at) VALUES (@key, @version, @line, @queuedAt)
        ON CONFLICT (key) DO UPDATE SET version = excluded.version, line = excluded.line, queued_at = excluded.queued_at`),
      after: db.prepare<[number, number], OutboxEntry>(
        'SELECT key, version, line FROM todo_outbox WHERE version > ? ORDER BY version LIMIT ?',
      ),
      remove: db.prepare<[string, number]>('DELETE FROM todo_outbox WHERE key = ? AND version = ?'),
      depth: db.prepare<[], { count: number }>('SELECT count(*) AS count FROM todo_outbox'),
      oldest: db.prepare<[number], OutboxEntry & { queued_at: number }>(
        'SELECT key, version, line, queued_at FROM todo_outbox ORDER BY version LIMIT ?',
      ),
      maxVersion: db.prepare<[], { version: number | null }>('SELECT max(version) AS version FROM todo_outbox'),
    };
    this.lastVersion = this.statements.maxVersion.get()?.version ?? 0;
  }

  /** Queues `request`, replacing any older operation on its key (coalescing). Call inside the transaction of its cause. */
  enqueue(request: TodoRequest): void {
    this.statements.upsert.run({
      key: request.key,
      version: ++this.lastVersion,
      line: JSON.stringify(request),
      queuedAt: Date.now(),
    });
    for (const listener of this.listeners) listener();
  }

  /** Called after each enqueue (synchronously, possibly inside the transaction: defer real work). */
  onEnqueued(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Up to `limit` entries with a version above `version`, oldest first. */
  listAfter(version: number, limit: number): OutboxEntry[] {
    return this.statements.after.all(version, limit);
  }

  /** Drops the entry once the harness has acknowledged it, unless a newer operation on its key replaced it meanwhile. */
  acknowledge(entry: OutboxEntry): void {
    try {
      this.statements.remove.run(entry.key, entry.version);
    } catch (error) {
      // A full disk can refuse even a delete: the entry stays and is sent again (the harness takes a repeat).
      if (!isStorageFault(error)) throw error;
    }
  }

  /** The oldest `limit` entries, with when each was queued (for the operator). */
  listOldest(limit: number): Array<OutboxEntry & { queuedAt: number }> {
    return this.statements.oldest.all(limit).map(({ queued_at, ...entry }) => ({ ...entry, queuedAt: queued_at }));
  }

  depth(): number {
    return this.statements.depth.get()?.count ?? 0;
  }
}
