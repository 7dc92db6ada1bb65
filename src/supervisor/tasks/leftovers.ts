// What a task leaves behind after its leader exits: processes of its group still alive.
import { groupTarget } from '../../workers/launch-node.js';
import { listMarkedGroupMembers, listMarkedProcesses } from '../../workers/process-table.js';
import { terminate } from '../../workers/terminate.js';
import { RUN_MARKER_NAME, type KillSignal } from '../../workers/protocol.js';
import type { TaskRecord } from '../registry/task-store.js';

/** The environment marker every process of one run of a task inherits. */
export const runMarker = (record: TaskRecord): string => `${RUN_MARKER_NAME}=${record.runKey}`;

/**
 * Living processes that carry the task's run marker (a reused group id is not the task's): in its
 * process group, or anywhere (what left the group too) except its shim.
 */
export function countLeftovers(record: TaskRecord, where: 'group' | 'anywhere'): number {
  if (record.pgid === null) return 0;
  if (where === 'group') return listMarkedGroupMembers(record.pgid, runMarker(record)).length;
  return listMarkedProcesses(runMarker(record), true).length;
}

/** Starts ending what is left in a finished task's process group (Node-spawned tasks only). */
export function killLeftovers(record: TaskRecord, signal: KillSignal, graceMs: number): void {
  if (record.pgid !== null) terminate(groupTarget(record.pgid), signal, graceMs);
}
