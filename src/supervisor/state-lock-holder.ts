// Who holds a state dir's daemon.pid, read from /proc and never from a process's name (the daemon
// renames its own process title, so a name proves nothing): the recorded pid must be alive with
// the recorded start time (a reused pid has another), and hold the lock file or the registry open.
import { readdirSync, readFileSync, readlinkSync, statSync, type BigIntStats } from 'node:fs';

/** What a daemon.pid says: `PID STARTTIME\n` (a daemon before the start time was recorded wrote `PID\n`). */
export interface LockRecord {
  pid: number;
  /** Field 22 of /proc/PID/stat, in clock ticks after boot; null in a record from before it was written. */
  startTime: string | null;
}

/** The content of daemon.pid for this process (the pid alone where /proc/self/stat cannot be read). */
export function describeOwnProcess(): string {
  const startTime = readStartTime(process.pid);
  return startTime === null ? `${process.pid}\n` : `${process.pid} ${startTime}\n`;
}

/** The record in a daemon.pid's text, or null when it is not one (empty, torn, garbage). */
export function parseLockRecord(text: string): LockRecord | null {
  const match = /^([1-9][0-9]{0,9})(?: ([0-9]{1,20}))?\n?$/.exec(text);
  if (!match) return null;
  return { pid: Number(match[1]), startTime: match[2] ?? null };
}

/** Whether the process `record` names is the one that wrote it (its start time too), alive and holding one of `files` open. */
export function holdsStateDir(record: LockRecord, files: BigIntStats[]): boolean {
  const startTime = readStartTime(record.pid);
  if (startTime === null || (record.startTime !== null && startTime !== record.startTime)) return false;
  return holdsOpen(record.pid, files);
}

/**
 * Whether process `pid` holds one of `files` open. One whose open files cannot be read (another
 * user's) counts as holding them: wrongly refusing a start says so and names the pid, while
 * wrongly taking over would run two daemons on one registry.
 */
export function holdsOpen(pid: number, files: BigIntStats[]): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EACCES';
  }
  return fds.some((fd) => openFileIsOneOf(`/proc/${pid}/fd/${fd}`, files));
}

/** Compared by device and inode: paths differ across bind mounts and symlinks, and a moved file keeps its inode. */
function openFileIsOneOf(link: string, files: BigIntStats[]): boolean {
  try {
    if (!readlinkSync(link).startsWith('/')) return false; // a socket, pipe or anon inode
    const open = statSync(link, { bigint: true });
    return files.some((file) => file.dev === open.dev && file.ino === open.ino);
  } catch {
    return false; // closed meanwhile
  }
}

/** Field 22 of /proc/PID/stat (starttime), or null when there is no such process. */
function readStartTime(pid: number): string | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  // The fields after the name (which may hold spaces and parentheses) start at field 3.
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19] ?? null;
}
