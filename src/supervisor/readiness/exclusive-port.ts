// run's exclusive_port: refuses a second server on a busy port, naming the task (or the outside
// process) that already listens there, instead of starting one that fails with "address in use".
import { readFileSync } from 'node:fs';
import { PortBusyError } from '../../errors.js';
import { findTcpListeners } from '../../process/ports.js';
import type { TaskService } from '../tasks/task-service.js';

/** Throws PortBusyError when anything listens on TCP `port`. */
export function assertPortFree(tasks: TaskService, port: number): void {
  for (const task of tasks.live.values()) {
    const listener = tasks.probes.portsOf(task.record).find((candidate) => candidate.protocol === 'tcp' && candidate.port === port);
    if (listener) throw new PortBusyError(port, `task ${JSON.stringify(task.record.id)} (pid ${listener.pid}, ${listener.address}:${port})`);
  }
  const [outside] = findTcpListeners(port);
  if (outside) throw new PortBusyError(port, outside.pid === 0 ? `a process this daemon cannot see (${outside.address}:${port})` : `pid ${outside.pid} (${processName(outside.pid)}, ${outside.address}:${port}), outside this daemon`);
}

function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return 'gone';
  }
}
