// Start-up: what the last daemon left. Every process and cgroup of any task in the registry is
// ended (a finished task may have left a setsid'd grandchild when the daemon died), and the tasks
// the registry shows as pending or running are marked interrupted.
import { existsSync, readFileSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { killCgroup } from '../../workers/launch-native.js';
import { groupProcessesByMarker } from '../../workers/process-table.js';
import { taskCgroupDir, type Containment } from '../containment.js';
import type { TaskRecord, TaskStore } from '../registry/task-store.js';
import { composeUpsert } from '../todos/todo-message.js';
import { RUN_MARKER_NAME } from '../../workers/protocol.js';
import type { OutputFiles } from './output-files.js';
import { leftoverViewSource } from './task-todos.js';

const CGROUP_EMPTY_WAIT_MS = 2000;

/** Ends what the registry's tasks left, marks unfinished ones interrupted with their todo, and returns those. */
export async function interruptLeftovers(store: TaskStore, containment: Containment, files: OutputFiles): Promise<TaskRecord[]> {
  await killEveryLeftover(store, containment);
  const source = leftoverViewSource(files);
  const interrupted: TaskRecord[] = [];
  for (const record of store.listUnfinished()) {
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

/** By cgroup, and by run marker (the task may have run under another containment or left its cgroup). */
async function killEveryLeftover(store: TaskStore, containment: Containment): Promise<void> {
  const marked = groupProcessesByMarker(RUN_MARKER_NAME);
  for (const runKey of store.listRunKeys()) {
    const cgroupDir = taskCgroupDir(containment, runKey);
    if (cgroupDir !== null && existsSync(cgroupDir)) await killAndRemoveCgroup(cgroupDir);
    for (const pid of marked.get(runKey) ?? []) killQuietly(pid);
  }
}

/** cgroup.kill, then waits (briefly) for `populated 0` and removes the folder. */
async function killAndRemoveCgroup(dir: string): Promise<void> {
  killCgroup(dir); // without cgroup.kill (an older kernel) the marker scan below still ends the processes
  const deadline = Date.now() + CGROUP_EMPTY_WAIT_MS;
  while (Date.now() < deadline && /^populated 1$/m.test(readFileSync(join(dir, 'cgroup.events'), 'utf8'))) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  try {
    rmdirSync(dir);
  } catch {
    // still populated (zombies waiting for a parent that never reaps): tried again at the next start
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}
