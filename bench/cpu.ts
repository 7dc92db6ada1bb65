// CPU figures from /proc for the benchmarks: a process's own and its reaped children's CPU, the
// daemon's spawners (and through them the shims and what they ran), and the machine's busy time.
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: /proc reports CPU time in clock ticks of 1/100 s on Linux. */
const TICKS_PER_SECOND = 100;

export interface ProcessCpu {
  /** utime + stime of every thread, in seconds. */
  own: number;
  /** cutime + cstime: children this process has waited for (and, through them, theirs). */
  children: number;
}

/** The CPU seconds of `pid` from /proc/PID/stat; zeros once it is gone. */
export function readProcessCpu(pid: number): ProcessCpu {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may hold spaces: state is field 3, utime field 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const tick = (index: number) => Number(fields[index - 3]) / TICKS_PER_SECOND;
    return { own: tick(14) + tick(15), children: tick(16) + tick(17) };
  } catch {
    return { own: 0, children: 0 };
  }
}

/** The pids of `pid`'s children (from every thread) named `comm`, cut to 15 characters as the kernel keeps it; '' for all. */
export function findChildren(pid: number, comm: string): number[] {
  const found: number[] = [];
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found; // the process ended
  }
  for (const thread of threads) {
    let children: string[];
    try {
      children = readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').trim().split(' ').filter(Boolean);
    } catch {
      continue; // the thread ended
    }
    for (const child of children) {
      try {
        if (comm === '' || readFileSync(`/proc/${child}/comm`, 'utf8').trim() === comm.slice(0, 15))
          found.push(Number(child));
      } catch {
        // the child ended
      }
    }
  }
  return found;
}

/** Busy and total CPU seconds of the whole machine (all cores), from /proc/stat. */
export function readMachineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0) / TICKS_PER_SECOND;
  const idle = (fields[3]! + fields[4]!) / TICKS_PER_SECOND;
  return { busy: total - idle, total };
}

/**
 * The CPU of a daemon and of what it started, over an interval: `mark()` takes a reading,
 * `since(reading)` gives seconds spent since, by the daemon process (main thread and workers),
 * its spawners themselves, and the shims with everything they ran (the spawners' reaped children).
 * Spawners are started on first use, so they are looked for at every reading.
 */
export function daemonCpuMeter(daemonPid: number) {
  const spawners = new Set<number>();
  const read = () => {
    for (const pid of findChildren(daemonPid, 'hive-task-spawner')) spawners.add(pid);
    const daemon = readProcessCpu(daemonPid);
    let spawnerOwn = 0;
    let tasks = 0;
    for (const pid of spawners) {
      const cpu = readProcessCpu(pid);
      spawnerOwn += cpu.own;
      tasks += cpu.children;
    }
    return { daemon: daemon.own, spawners: spawnerOwn, tasks, spawnerCount: spawners.size };
  };
  return {
    spawners,
    mark: read,
    since(start: ReturnType<typeof read>) {
      const now = read();
      return {
        daemon: now.daemon - start.daemon,
        spawners: now.spawners - start.spawners,
        tasks: now.tasks - start.tasks,
        spawnerCount: now.spawnerCount,
      };
    },
  };
}

/** Waits (up to `timeoutMs`) until none of `pids` has a child left unreaped, so their cutime holds all of them. */
export async function awaitReaped(pids: Iterable<number>, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const pending = () => [...pids].some((pid) => findChildren(pid, '').length > 0);
  while (pending() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}
