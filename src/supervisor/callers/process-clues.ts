// What the callers' lookup reads of processes and cgroups: a process's ancestry and whether it is
// alive (/proc), and the cgroup folder of an id that sock_diag gives a socket.
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { readProcessEntry } from '../../process/process-table.js';

/** Parents followed at most from a process towards pid 1. */
const MAX_ANCESTRY = 4096;

/** The path, beneath `root`, of the cgroup whose id (its folder's inode) is `id`, searched a few levels down; '' for `root` itself; null when none. */
export function findCgroupById(root: string, id: bigint, depth = 3): string | null {
  if (statSync(root, { bigint: true, throwIfNoEntry: false })?.ino === id) return '';
  if (depth === 0) return null;
  let entries: Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return null;
  }
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const found = findCgroupById(join(root, entry.name), id, depth - 1);
    if (found !== null) return found === '' ? entry.name : `${entry.name}/${found}`;
  }
  return null;
}

/** Whether process `pid` is there and not a zombie. */
export function isAlive(pid: number): boolean {
  const state = readProcessEntry(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
}

/** `pid`, its parent, and so on up to this process or one whose parent is 1 or unseen (0); null when one exits meanwhile. */
export function readAncestry(pid: number): number[] | null {
  const chain: number[] = [];
  for (let at = pid; chain.length < MAX_ANCESTRY;) {
    const entry = readProcessEntry(at);
    if (entry === null) return null;
    chain.push(at);
    if (at === process.pid || entry.ppid <= 1) return chain;
    at = entry.ppid;
  }
  return null;
}
