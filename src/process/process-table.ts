// Reads the kernel's process table (/proc) to find what is left of a task: by process group, and
// by the run marker every process of one run of a task inherits in its environment.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { PROCESS_STEPS, type Slices } from './slices.js';

/** The variable, set to the run's key, that every process of one run of a task inherits. */
export const RUN_MARKER_NAME = 'HIVE_BASH_RUN';

/** `HIVE_BASH_RUN=<run key>`: the marker of one run of a task. */
export const runMarker = (runKey: string): string => `${RUN_MARKER_NAME}=${runKey}`;

export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  /** The command name (comm), at most 15 characters. */
  name: string;
  /** CPU time it used (utime + stime), and that of the children it reaped (cutime + cstime), in ms. */
  cpuMs: number;
  childCpuMs: number;
  /** Resident memory in bytes. */
  rssBytes: number;
}

/** /proc's clock ticks are USER_HZ, which the kernel's ABI fixes at 100 a second. */
const MS_PER_TICK = 10;
/** The page size, from what the kernel says of this process in two units (statm pages, status kB). */
const PAGE_BYTES = readPageBytes();

function readPageBytes(): number {
  try {
    const pages = Number(readFileSync('/proc/self/statm', 'latin1').split(' ')[1]);
    const kb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1]);
    const bytes = 2 ** Math.round(Math.log2((kb * 1024) / pages));
    return Number.isFinite(bytes) && bytes >= 4096 ? bytes : 4096;
  } catch {
    return 4096;
  }
}

/**
 * Parses /proc/PID/stat; null when the process is gone, or `pid` names none (a /proc entry such as
 * `self` or `net`). The name field may hold spaces and parentheses.
 */
export function readProcessEntry(pid: number | string): ProcessEntry | null {
  if (typeof pid === 'string') pid = Number(pid);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  const ticks = (index: number) => Number(fields[index] ?? 0);
  return {
    pid,
    name: text.slice(text.indexOf('(') + 1, close),
    state: fields[0] ?? '?',
    ppid: ticks(1),
    pgid: ticks(2),
    cpuMs: (ticks(11) + ticks(12)) * MS_PER_TICK,
    childCpuMs: (ticks(13) + ticks(14)) * MS_PER_TICK,
    rssBytes: ticks(21) * PAGE_BYTES,
  };
}

/** False when no process, not even a zombie, is in group `pgid`: one syscall instead of a /proc scan. */
export function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Pids of the living (not zombie) processes in process group `pgid`. */
export function listGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  if (!groupExists(pgid)) return members;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return members;
  }
  for (const name of names) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const entry = readProcessEntry(pid);
    // A zombie is dead: it waits only for its parent (here often a PID 1 that never reaps).
    if (entry && entry.pgid === pgid && entry.state !== 'Z' && entry.state !== 'X') members.push(pid);
  }
  return members;
}

/** The value of variable `name` in process `pid`'s environment (as it was at exec), or null. */
export function readEnvironmentValue(pid: number, name: string): string | null {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
  const needle = Buffer.from(`\0${name}=`);
  const haystack = Buffer.concat([Buffer.from([0]), environ]);
  const at = haystack.indexOf(needle);
  if (at === -1) return null;
  const start = at + needle.length;
  const end = haystack.indexOf(0, start);
  return haystack.toString('utf8', start, end === -1 ? haystack.length : end);
}

/** True when process `pid` carries `NAME=VALUE` in its environment (as it was at exec). */
export function hasEnvironmentMarker(pid: number, marker: string): boolean {
  const equals = marker.indexOf('=');
  return readEnvironmentValue(pid, marker.slice(0, equals)) === marker.slice(equals + 1);
}

/** The living processes of group `pgid` that carry `marker`: what is left of one task, even if the group id was reused. */
export function listMarkedGroupMembers(pgid: number, marker: string): number[] {
  return listGroupMembers(pgid).filter((pid) => hasEnvironmentMarker(pid, marker));
}

/** The name of the per-task shim's process, which carries its task's environment too. */
export const SHIM_PROCESS_NAME = 'hive-task-shim';

/** Every living process that carries `marker`, wherever it is in the process tree (shims too). */
export function listMarkedProcesses(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || !hasEnvironmentMarker(pid, marker)) continue;
    const entry = readProcessEntry(pid);
    if (entry && isAlive(entry)) pids.push(pid);
  }
  return pids;
}

/** Every living process that carries variable `name`, grouped by its value: one pass over /proc. */
export function groupProcessesByMarker(name: string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    const value = readEnvironmentValue(pid, name);
    const state = value === null ? undefined : readProcessEntry(pid)?.state;
    if (value === null || state === undefined || state === 'Z' || state === 'X') continue;
    groups.set(value, [...(groups.get(value) ?? []), pid]);
  }
  return groups;
}

/** Every process in /proc, read in one go (see readProcessTableInSlices). */
export function readProcessTable(): ProcessEntry[] {
  return readdirSync('/proc')
    .map(readProcessEntry)
    .filter((entry): entry is ProcessEntry => entry !== null);
}

/** Every process in /proc, read a slice at a time. */
export async function readProcessTableInSlices(slices: Slices): Promise<ProcessEntry[]> {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (slices.due(PROCESS_STEPS)) await slices.pause();
    const entry = readProcessEntry(name);
    if (entry) entries.push(entry);
  }
  return entries;
}

/** The processes below `rootPid` in `table`, at any depth (not the root itself). */
export function listDescendants(table: ProcessEntry[], rootPid: number): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table) {
    const siblings = children.get(entry.ppid);
    if (siblings === undefined) children.set(entry.ppid, [entry]);
    else siblings.push(entry);
  }
  // Pushed one by one: a spread of a process's 150,000 children into push() overflows the stack.
  const found: ProcessEntry[] = [];
  for (let queue = children.get(rootPid) ?? []; queue.length > 0;) {
    const next: ProcessEntry[] = [];
    for (const entry of queue) {
      found.push(entry);
      for (const child of children.get(entry.pid) ?? []) next.push(child);
    }
    queue = next;
  }
  return found;
}

/** Whether `entry` is alive (a zombie is dead: it waits only for its parent to reap it). */
export function isAlive(entry: ProcessEntry): boolean {
  return entry.state !== 'Z' && entry.state !== 'X';
}

/** Where the kernel lists a thread's children (CONFIG_PROC_CHILDREN); else /proc is scanned. */
const HAS_CHILDREN_FILES = existsSync(`/proc/self/task/${process.pid}/children`);

/**
 * This process's children, every thread's, zombies included: what it started and has not reaped.
 * A child of a thread that ended passes to another thread of the process, so it is still listed.
 */
export function listOwnChildren(): ProcessEntry[] {
  if (!HAS_CHILDREN_FILES) return readProcessTable().filter((entry) => entry.ppid === process.pid);
  return childrenOf(process.pid)
    .map(readProcessEntry)
    .filter((entry): entry is ProcessEntry => entry !== null);
}

/** The children of every thread of process `pid` (CONFIG_PROC_CHILDREN); none once it is gone. */
function childrenOf(pid: number): number[] {
  const pids: number[] = [];
  for (const children of childrenByThread(pid)) for (const child of children) pids.push(child);
  return pids;
}

/** The children of each thread of process `pid` in turn: a process can hold tens of thousands of threads. */
function* childrenByThread(pid: number): Generator<number[]> {
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  for (const thread of threads) {
    let listed: string;
    try {
      listed = readFileSync(`/proc/${pid}/task/${thread}/children`, 'latin1').trim();
    } catch {
      continue; // the thread ended meanwhile
    }
    yield listed === '' ? [] : listed.split(' ').map(Number);
  }
}

/**
 * Process `rootPid` (null once it is gone) and every process below it, zombies included, read a
 * slice at a time: from the root down through the kernel's lists of children, so what it costs is
 * the subtree's size, not the machine's (without those lists, the whole table's).
 */
export async function readSubtree(
  rootPid: number,
  slices: Slices,
): Promise<{ root: ProcessEntry | null; below: ProcessEntry[] }> {
  if (!HAS_CHILDREN_FILES) {
    const table = await readProcessTableInSlices(slices);
    return { root: table.find((entry) => entry.pid === rootPid) ?? null, below: listDescendants(table, rootPid) };
  }
  const root = readProcessEntry(rootPid);
  const below: ProcessEntry[] = [];
  if (root === null) return { root, below };
  // A pid is read once, even if it was reused (and so listed again) during the walk.
  const seen = new Set([rootPid]);
  for (let level = childrenOf(rootPid); level.length > 0;) {
    const next: number[] = [];
    for (const pid of level) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      if (slices.due(PROCESS_STEPS)) await slices.pause();
      const entry = readProcessEntry(pid);
      if (entry === null) continue; // gone meanwhile
      below.push(entry);
      // Each thread's list of children is a read: 10,000 threads of one process took 120 to 300 ms.
      for (const children of childrenByThread(pid)) {
        if (slices.due()) await slices.pause();
        for (const child of children) next.push(child);
      }
    }
    level = next;
  }
  return { root, below };
}

/** How many children this process has, and how many of them are zombies (a leak would show here). */
export function countOwnChildren(): { processes: number; zombies: number } {
  const children = listOwnChildren();
  return { processes: children.length, zombies: children.filter((entry) => !isAlive(entry)).length };
}
