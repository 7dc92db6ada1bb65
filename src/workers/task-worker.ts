// The piscina entry: takes this thread's port (its port handshake), then runs each task it is given
// as a TaskRun, routing control messages to the run by its key. Many tasks share one thread.
import type { MessagePort } from 'node:worker_threads';
import type { PortHandshake, ControlEnvelope, TaskOutcome, TaskSpec } from './protocol.js';
import { TaskRun } from './task-run.js';
import { withTimeout } from '../with-timeout.js';

/** How long a task waits for its thread's port (its port handshake is normally there first). */
const PORT_WAIT_MS = 10_000;

/** The runs this thread hosts, by run key: where control messages go. */
const runs = new Map<string, TaskRun>();
/** This thread's port to the supervisor, once its port handshake came. */
let threadPort: MessagePort | null = null;
let markAttached!: (port: MessagePort) => void;
const attached = new Promise<MessagePort>((resolve) => (markAttached = resolve));

export default async function runTask(task: TaskSpec | PortHandshake): Promise<TaskOutcome> {
  if ('attach' in task) return attach(task.attach);
  const port = await withTimeout(attached, PORT_WAIT_MS, null);
  if (port === null)
    return { ok: false, error: `this worker thread got no port to report on within ${PORT_WAIT_MS / 1000} s` };
  const run = new TaskRun(task, port);
  runs.set(task.runKey, run);
  try {
    await run.run();
    return { ok: true };
  } catch (error) {
    return { ok: false, error: (error as Error).stack ?? String(error) };
  } finally {
    runs.delete(task.runKey);
  }
}

/** Takes `port` as this thread's, and holds its task until the supervisor closes the port. */
async function attach(port: MessagePort): Promise<TaskOutcome> {
  if (threadPort !== null) {
    port.close();
    return { ok: false, error: 'this thread has its port already' };
  }
  threadPort = port;
  port.on('message', ({ runKey, message }: ControlEnvelope) => runs.get(runKey)?.onControl(message));
  port.unref(); // the thread's tasks keep it busy; the port alone must not
  markAttached(port);
  await new Promise((resolve) => port.once('close', resolve));
  return { ok: true };
}
