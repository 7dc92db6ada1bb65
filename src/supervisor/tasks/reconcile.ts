// Start-up: what the registry shows as pending or running was left by a daemon that stopped or died.
import { listMarkedGroupMembers } from '../../workers/process-table.js';
import { signalGroup } from '../../workers/terminate.js';
import type { TaskRecord, TaskStore } from '../registry/task-store.js';
import { composeUpsert } from '../todos/todo-message.js';
import { runMarker } from './leftovers.js';
import type { OutputFiles } from './output-files.js';
import { todoViewSource } from './task-todos.js';

/** Kills what is left of each unfinished task, marks it interrupted with its todo, and returns those records. */
export function interruptLeftovers(store: TaskStore, files: OutputFiles): TaskRecord[] {
  const source = todoViewSource(files);
  const interrupted: TaskRecord[] = [];
  for (const record of store.listUnfinished()) {
    if (record.pgid !== null && listMarkedGroupMembers(record.pgid, runMarker(record)).length > 0) {
      signalGroup(record.pgid, 'SIGKILL');
    }
    const ended: TaskRecord = {
      ...record,
      state: 'interrupted',
      endedAt: Date.now(),
      error: record.state === 'pending' ? 'the daemon stopped before the task started' : 'the daemon stopped while the task was running',
      // Every one gets a todo: the agent may never have been told this task's id, let alone its end.
      todoShown: true,
    };
    store.markEnded(ended, composeUpsert(ended, source));
    interrupted.push(ended);
  }
  return interrupted;
}
