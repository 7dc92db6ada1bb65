// Which ports processes listen on: their socket fds (/proc/PID/fd) matched against the kernel's
// socket tables (/proc/PID/net/tcp, tcp6, udp, udp6: those of the process's network namespace,
// which a sandboxed task has of its own). The tables are read only for processes that hold a
// socket at all, once per namespace, so a task without one costs a directory read per process.
// A process can hold tens of thousands of sockets, and a namespace's tables list every socket in
// it: the work is done a slice at a time (slices.ts; 15,000 listening sockets took 250 to 300 ms in
// one go), and the tables are read off the main thread.
import { readdirSync, readlinkSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import type { ListeningPort } from '../shared/task-snapshot.js';
import { inSlices, type Slices } from './slices.js';

const TABLES = [
  { file: 'tcp', protocol: 'tcp', v6: false },
  { file: 'tcp6', protocol: 'tcp', v6: true },
  { file: 'udp', protocol: 'udp', v6: false },
  { file: 'udp6', protocol: 'udp', v6: true },
] as const;
/** TCP_LISTEN; for UDP, a bound socket with no peer (TCP_CLOSE in the table's terms). */
const LISTENING_STATE = { tcp: '0A', udp: '07' } as const;
/** A listening socket as its table gives it, its address still in the table's hex. */
interface TableSocket {
  protocol: 'tcp' | 'udp';
  hexAddress: string;
  v6: boolean;
  port: number;
}

/** The ports a task's processes listen on: the first `most` by port, and how many more there are. */
export interface FoundPorts {
  listed: ListeningPort[];
  unlisted: number;
}

export const NO_PORTS: FoundPorts = { listed: [], unlisted: 0 };

/** The socket inodes process `pid` holds (empty when it is gone or holds none). */
async function socketInodes(pid: number, slices: Slices): Promise<number[]> {
  let fds: string[];
  try {
    fds = await readdir(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: number[] = [];
  for (const fd of fds) {
    if (slices.due()) await slices.pause();
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target.startsWith('socket:[')) inodes.push(Number(target.slice(8, -1)));
  }
  return inodes;
}

/** Every listening socket in the network namespace whose /proc/.../net folder is `netDir`, by inode (added to `sockets`). */
async function readListeningSockets(
  netDir: string,
  sockets: Map<number, TableSocket>,
  slices: Slices,
): Promise<Map<number, TableSocket>> {
  for (const table of TABLES) {
    let text: string;
    try {
      text = await readFile(`${netDir}/${table.file}`, 'latin1');
    } catch {
      continue; // no IPv6 here, say
    }
    const state = LISTENING_STATE[table.protocol];
    for (let start = text.indexOf('\n') + 1; start > 0 && start < text.length; start = text.indexOf('\n', start) + 1) {
      if (slices.due()) await slices.pause();
      const end = text.indexOf('\n', start);
      const fields = text
        .slice(start, end === -1 ? undefined : end)
        .trim()
        .split(/\s+/);
      if (fields.length < 10 || fields[3] !== state) continue;
      const [hexAddress, hexPort] = fields[1]!.split(':') as [string, string];
      const port = parseInt(hexPort, 16);
      if (port !== 0) sockets.set(Number(fields[9]), { protocol: table.protocol, hexAddress, v6: table.v6, port });
    }
  }
  return sockets;
}

/** A socket a process listens on, its address still in the table's hex. */
export interface HeldSocket extends TableSocket {
  pid: number;
}

/** Every socket `pids` listen on, by port (a socket shared by several processes is counted once, for the first). */
export function findListeningSockets(pids: number[]): Promise<HeldSocket[]> {
  return inSlices(async (slices) => {
    const held: Array<{ pid: number; inodes: number[] }> = [];
    for (const pid of pids) {
      const inodes = await socketInodes(pid, slices);
      if (inodes.length > 0) held.push({ pid, inodes });
    }
    const sockets = await readNamespaceTables(held, slices);
    const found: HeldSocket[] = [];
    const seen = new Set<number>();
    for (const { pid, inodes } of held) {
      for (const inode of inodes) {
        const socket = sockets.get(inode);
        if (socket === undefined || seen.has(inode)) continue;
        seen.add(inode);
        found.push({ ...socket, pid });
      }
    }
    return found.sort(
      (a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol) || a.hexAddress.localeCompare(b.hexAddress),
    );
  });
}

/** The listening sockets of the network namespaces the processes of `held` are in, by inode. */
async function readNamespaceTables(held: Array<{ pid: number }>, slices: Slices): Promise<Map<number, TableSocket>> {
  // Socket inodes are unique across namespaces: one map holds every namespace's tables.
  const sockets = new Map<number, TableSocket>();
  const namespaces = new Set<string>();
  for (const { pid } of held) {
    let namespace: string;
    try {
      namespace = readlinkSync(`/proc/${pid}/ns/net`);
    } catch {
      continue; // gone meanwhile
    }
    if (namespaces.has(namespace)) continue;
    namespaces.add(namespace);
    await readListeningSockets(`/proc/${pid}/net`, sockets, slices);
  }
  return sockets;
}

/** The first `most` of `held` (those on TCP `tcpPort` only, when given) as ports, and how many more there are. */
export function listPorts(held: HeldSocket[], most: number, tcpPort?: number): FoundPorts {
  const wanted =
    tcpPort === undefined ? held : held.filter((socket) => socket.protocol === 'tcp' && socket.port === tcpPort);
  const listed = wanted.slice(0, most).map((socket) => portOf(socket, socket.pid));
  return { listed, unlisted: wanted.length - listed.length };
}

function portOf(socket: TableSocket, pid: number): ListeningPort {
  return { protocol: socket.protocol, address: decodeAddress(socket.hexAddress, socket.v6), port: socket.port, pid };
}

/** The processes anywhere on this machine that listen on TCP `port` (a scan of every process: for exclusive_port only). */
export function findTcpListeners(port: number): Promise<ListeningPort[]> {
  return inSlices(async (slices) => {
    const sockets = await readListeningSockets('/proc/net', new Map(), slices);
    const wanted = new Map([...sockets].filter(([, socket]) => socket.protocol === 'tcp' && socket.port === port));
    if (wanted.size === 0) return [];
    const found: ListeningPort[] = [];
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid <= 0) continue;
      for (const inode of await socketInodes(pid, slices)) {
        const socket = wanted.get(inode);
        if (socket !== undefined) found.push(portOf(socket, pid));
      }
    }
    // A listener whose holder cannot be seen (another user's, in a container) still counts, as pid 0.
    return found.length > 0 ? found : [...wanted.values()].map((socket) => portOf(socket, 0));
  });
}

/** /proc/net's hex address (little-endian 32-bit words) as text. */
function decodeAddress(hex: string, v6: boolean): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((word) => [6, 4, 2, 0].map((at) => parseInt(word.slice(at, at + 2), 16)));
  if (!v6) return bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  return compressIpv6(groups);
}

function compressIpv6(groups: string[]): string {
  let best = { at: -1, length: 0 };
  for (let at = 0; at < groups.length;) {
    if (groups[at] !== '0') {
      at++;
      continue;
    }
    let end = at;
    while (end < groups.length && groups[end] === '0') end++;
    if (end - at > best.length) best = { at, length: end - at };
    at = end;
  }
  if (best.length < 2) return groups.join(':');
  return `${groups.slice(0, best.at).join(':')}::${groups.slice(best.at + best.length).join(':')}`;
}
