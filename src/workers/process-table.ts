// Reads the kernel's process table (/proc) to find what is left of a task.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcessEntry {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
}

/** Parses /proc/PID/stat; null when the process is gone. The name field may hold spaces and parentheses. */
export function readProcessEntry(pid: number): ProcessEntry | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid, state: fields[0] ?? '?', ppid: Number(fields[1]), pgid: Number(fields[2]) };
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

/** True when process `pid` carries `NAME=VALUE` in its environment (as it was at exec). */
export function hasEnvironmentMarker(pid: number, marker: string): boolean {
  let environ: Buffer;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  const needle = Buffer.from(`${marker}\0`);
  return environ.subarray(0, needle.length).equals(needle) || environ.includes(Buffer.concat([Buffer.from([0]), needle]));
}

/** The living processes of group `pgid` that carry `marker`: what is left of one task, even if the group id was reused. */
export function listMarkedGroupMembers(pgid: number, marker: string): number[] {
  return listGroupMembers(pgid).filter((pid) => hasEnvironmentMarker(pid, marker));
}

/** Every living process that carries `marker`, wherever it is in the process tree. */
export function listMarkedProcesses(marker: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0 || !hasEnvironmentMarker(pid, marker)) continue;
    const entry = readProcessEntry(pid);
    if (entry && entry.state !== 'Z' && entry.state !== 'X') pids.push(pid);
  }
  return pids;
}
