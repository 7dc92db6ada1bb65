// The harness side's memory: the current todo of each key, changed by the requests it accepts.
import type { HarnessRequest, TodoUpsert } from '../shared/todo-protocol.js';

/** What one accepted request did, as the reference harness prints it. */
export type BoardChange =
  | ({ event: 'todo_upsert'; received_at: number; open_todos: number } & Omit<TodoUpsert, 'cmd'>)
  | { event: 'todo_clear'; received_at: number; open_todos: number; source: string; key: string; existed: boolean }
  | { event: 'wake'; received_at: number; from: string; body: string };

export class TodoBoard {
  private readonly todos = new Map<string, TodoUpsert>();

  /** Applies `request` and returns what changed. */
  apply(request: HarnessRequest): BoardChange {
    const received_at = Date.now();
    switch (request.cmd) {
      case 'todo_upsert': {
        this.todos.set(keyOf(request.source, request.key), request);
        const { cmd: _, ...todo } = request;
        return { event: 'todo_upsert', received_at, open_todos: this.todos.size, ...todo };
      }
      case 'todo_clear': {
        const existed = this.todos.delete(keyOf(request.source, request.key));
        return {
          event: 'todo_clear',
          received_at,
          open_todos: this.todos.size,
          source: request.source,
          key: request.key,
          existed,
        };
      }
      case 'wake':
        return { event: 'wake', received_at, from: request.from, body: request.body };
    }
  }

  /** The open todos, oldest first. */
  list(): TodoUpsert[] {
    return [...this.todos.values()];
  }
}

/** Keys are per source: two sources may use the same key for different things. */
const keyOf = (source: string, key: string) => `${source}\0${key}`;
