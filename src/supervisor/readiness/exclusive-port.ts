// run's exclusive_port: refuses a second server on a busy port, naming the task (or the outside
// process) that already listens there, instead of starting one that fails with "address in use".
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { PortBusyError } from '../../errors.js';
import { findTcpListeners } from '../../process/ports.js';
import type { TaskService } from '../tasks/task-service.js';

/** Throws PortBusyError when anything listens on TCP `port`. */
export async function assertPortFree(tasks: TaskService, port: number): Promise<void> {
  const held = await tasks.listenerOn(port);
  if (held) {
    const { id, listener } = held;
    throw new PortBusyError(port, `task ${JSON.stringify(id)} (pid ${listener.pid}, ${listener.address}:${port})`);
  }
  const [outside] = await findTcpListeners(port);
  if (outside)
    throw new PortBusyError(
      port,
      outside.pid === 0
        ? `a process this daemon cannot see (${outside.address}:${port})`
        : `pid ${outside.pid} (${processName(outside.pid)}, ${outside.address}:${port}), outside this daemon`,
    );
}

/** The program a process runs, as `ps` names it: its argv[0]'s base name (comm can be a thread's name, as Node 24's "MainThread"). */
function processName(pid: number): string {
  try {
    const argv0 = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    return argv0.length > 0 ? basename(argv0) : readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return 'gone';
  }
}
