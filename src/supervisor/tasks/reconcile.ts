// Start-up: what the registry shows as pending or running was left by a daemon that stopped or died.
import { existsSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listMarkedProcesses } from '../../workers/process-table.js';
import { taskCgroupDir, type Containment } from '../containment.js';
import type { TaskRecord, TaskStore } from '../registry/task-store.js';
import { composeUpsert } from '../todos/todo-message.js';
import { runMarker } from './leftovers.js';
import type { OutputFiles } from './output-files.js';
import { leftoverViewSource } from './task-todos.js';

const CGROUP_EMPTY_WAIT_MS = 2000;

/** Kills what is left of each unfinished task, marks it interrupted with its todo, and returns those records. */
export async function interruptLeftovers(store: TaskStore, containment: Containment, files: OutputFiles): Promise<TaskRecord[]> {
  const source = leftoverViewSource(files);
  const interrupted: TaskRecord[] = [];
  for (const record of store.listUnfinished()) {
    const cgroupDir = taskCgroupDir(containment, record.runKey);
    if (cgroupDir !== null && existsSync(cgroupDir)) await killCgroup(cgroupDir);
    // Also by marker: the task may have run under another containment, or something left its cgroup's reach.
    for (const pid of listMarkedProcesses(runMarker(record))) killQuietly(pid);
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

/** cgroup.kill, then waits (briefly) for `populated 0` and removes the folder. */
async function killCgroup(dir: string): Promise<void> {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
  } catch {
    // an older kernel without cgroup.kill: the marker scan below still ends the processes
  }
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
