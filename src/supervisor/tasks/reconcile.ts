// Start-up: what the last daemon left. Every process and cgroup of any task in the registry, or
// with a cgroup in the daemon's own folders, is ended (a finished task may have left a setsid'd
// grandchild when the daemon died), and the tasks the registry shows as pending or running are
// marked interrupted, each with its todo.
import { allTaskCgroupDirs, leftoverRunKeys, type HostSetup } from '../../process/containment.js';
import { killStaleTasks } from '../../process/leftover-processes.js';
import { NO_PORTS } from '../../process/ports.js';
import { NO_RESOURCES } from '../../process/resources.js';
import { policyView } from '../model/exec-denials.js';
import { advance, STOPPED_WHILE_RUNNING } from '../model/lifecycle.js';
import { COMMAND_CHARS_SHOWN, readOutputTails, type SnapshotSource } from '../model/task-snapshot.js';
import type { OutputFiles } from '../output/output-files.js';
import type { TaskStore } from '../registry/task-store.js';
import { composeTodo } from '../todos/todo-message.js';

/** The ids of interrupted tasks a start names in its log, at most. */
const IDS_LOGGED = 100;

/** Ends what the registry's tasks left, marks unfinished ones interrupted; how many, and the first ids. */
export async function interruptStaleTasks(
  store: TaskStore,
  hostSetup: HostSetup,
  files: OutputFiles,
): Promise<{ count: number; ids: string[] }> {
  const runKeys = new Set([...store.listRunKeys(), ...leftoverRunKeys(hostSetup)]);
  await killStaleTasks([...runKeys].map((runKey) => ({ runKey, cgroupDirs: allTaskCgroupDirs(hostSetup, runKey) })));
  // Their files remain; nothing of them runs.
  const source: SnapshotSource = {
    outputPaths: (id) => files.pathsOf(id),
    outputTails: (record, tailBytes) => readOutputTails(files.pathsOf(record.id), tailBytes),
    countLingering: () => 0,
    resourcesOf: () => NO_RESOURCES,
    portsOf: () => NO_PORTS,
    stdinOpen: () => false,
    policyOf: (record) => (record.denials.count > 0 ? policyView(record.denials, []) : null),
  };
  const ids: string[] = [];
  // A todo shows a command's first characters: one more tells whether it was cut.
  const count = store.endUnfinished(COMMAND_CHARS_SHOWN + 1, (record) => {
    const error = record.state === 'pending' ? 'the daemon stopped before the task started' : STOPPED_WHILE_RUNNING;
    // Every one gets a todo: the agent may never have been told this task's id, let alone its end.
    const { record: ended, effects } = advance(
      record,
      { type: 'interrupted', error, endedAt: Date.now() },
      { stopping: true },
    );
    if (ids.length < IDS_LOGGED) ids.push(ended.id);
    return { record: ended, todo: effects.todo === null ? null : composeTodo(ended, effects.todo, source) };
  });
  return { count, ids };
}
