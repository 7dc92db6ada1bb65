// What a task leaves behind after its leader exits: processes of its group still alive.
import { listMarkedGroupMembers } from '../../workers/process-table.js';
import { terminateGroup } from '../../workers/terminate.js';
import type { KillSignal } from '../../workers/protocol.js';
import type { TaskRecord } from '../registry/task-store.js';

/** The environment marker every process of one run of a task inherits. */
export const runMarker = (record: TaskRecord): string => `HIVE_BASH_RUN=${record.runKey}`;

/** Living processes of the task's group that carry its run marker (a reused group id is not the task's). */
export function countLeftovers(record: TaskRecord): number {
  if (record.pgid === null || !groupExists(record.pgid)) return 0;
  return listMarkedGroupMembers(record.pgid, runMarker(record)).length;
}

/** One syscall that rules out the scan of /proc in the usual case: nothing left in the group at all. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Starts ending what is left of a task and returns how many processes that was. */
export function killLeftovers(record: TaskRecord, signal: KillSignal, graceMs: number): number {
  const leftovers = countLeftovers(record);
  if (leftovers > 0 && record.pgid !== null) terminateGroup(record.pgid, signal, graceMs);
  return leftovers;
}
