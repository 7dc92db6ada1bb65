// The rules of a task's todo: shown once the task outlives run's wait, upserted on each later
// change of state, cleared when a caller is handed the finished result. Each write goes to the
// registry together with the todo it causes, in one transaction.
import { FINISHED_STATES, type TaskRecord, type TaskStore } from '../registry/task-store.js';
import type { TaskViewSource } from '../mcp/task-view.js';
import { composeClear, composeUpsert } from '../todos/todo-message.js';
import type { OutputFiles } from './output-files.js';
import { NO_RESOURCES } from '../../workers/task-resources.js';
import type { TodoUpsert } from '../../agent-socket/protocol.js';

/**
 * What a todo's view reads through `tasks` (the TaskService, which knows the containment): only a
 * task that ended by itself can have leftovers worth reporting, and a todo shows no resource figures.
 */
export function todoViewSource(tasks: TaskViewSource): TaskViewSource {
  return {
    outputPaths: (id) => tasks.outputPaths(id),
    // A kill, timeout or interruption is still escalating when its end is reported: what it counts is about to die.
    countLeftovers: (record) => (record.state === 'done' ? tasks.countLeftovers(record) : 0),
    resourcesOf: () => NO_RESOURCES,
    stdinOpen: (record) => tasks.stdinOpen(record),
  };
}

/** The view source for the last daemon's tasks at start-up: their files remain, nothing of them runs. */
export function leftoverViewSource(files: OutputFiles): TaskViewSource {
  return { outputPaths: (id) => files.pathsOf(id), countLeftovers: () => 0, resourcesOf: () => NO_RESOURCES, stdinOpen: () => false };
}

export class TaskTodos {
  private readonly source: TaskViewSource;

  constructor(
    private readonly store: TaskStore,
    tasks: TaskViewSource,
  ) {
    this.source = todoViewSource(tasks);
  }

  /** The task outlived run's wait: its todo appears, showing its current state. Returns the updated record. */
  show(record: TaskRecord): TaskRecord {
    const shown = { ...record, todoShown: true };
    this.store.markTodo(shown, composeUpsert(shown, this.source));
    return shown;
  }

  /** A finished result is being handed to a caller: its todo, if shown, goes away. Returns the updated record. */
  clear(record: TaskRecord): TaskRecord {
    if (!record.todoShown || !FINISHED_STATES.includes(record.state)) return record;
    const cleared = { ...record, todoShown: false };
    this.store.markTodo(cleared, composeClear(record.id));
    return cleared;
  }

  /** The upsert for a change of state of `record`, or null when it shows no todo. */
  changed(record: TaskRecord): TodoUpsert | null {
    return record.todoShown ? composeUpsert(record, this.source) : null;
  }
}
