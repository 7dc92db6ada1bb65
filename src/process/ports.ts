// Which ports processes listen on: their socket fds (/proc/PID/fd) matched against the kernel's
// socket tables (/proc/PID/net/tcp, tcp6, udp, udp6: those of the process's network namespace,
// which a sandboxed task has of its own). The tables are read only for processes that hold a
// socket at all, once per namespace, so a task without one costs a directory read per process.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { ListeningPort } from '../shared/task-snapshot.js';

const TABLES = [
  { file: 'tcp', protocol: 'tcp', v6: false },
  { file: 'tcp6', protocol: 'tcp', v6: true },
  { file: 'udp', protocol: 'udp', v6: false },
  { file: 'udp6', protocol: 'udp', v6: true },
] as const;
/** TCP_LISTEN; for UDP, a bound socket with no peer (TCP_CLOSE in the table's terms). */
const LISTENING_STATE = { tcp: '0A', udp: '07' } as const;

/** The socket inodes process `pid` holds (empty when it is gone or holds none). */
function socketInodes(pid: number): number[] {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes: number[] = [];
  for (const fd of fds) {
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
function readListeningSockets(
  netDir = '/proc/net',
  sockets = new Map<number, Omit<ListeningPort, 'pid'>>(),
): Map<number, Omit<ListeningPort, 'pid'>> {
  for (const table of TABLES) {
    let text: string;
    try {
      text = readFileSync(`${netDir}/${table.file}`, 'latin1');
    } catch {
      continue; // no IPv6 here, say
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== LISTENING_STATE[table.protocol]) continue;
      const [hexAddress, hexPort] = fields[1]!.split(':') as [string, string];
      const port = parseInt(hexPort, 16);
      if (port === 0) continue;
      sockets.set(Number(fields[9]), { protocol: table.protocol, address: decodeAddress(hexAddress, table.v6), port });
    }
  }
  return sockets;
}

/** The ports `pids` listen on, sorted by port (a socket shared by several processes is listed once, for the first). */
export function listListeningPorts(pids: number[]): ListeningPort[] {
  const held = pids.map((pid) => ({ pid, inodes: socketInodes(pid) })).filter((entry) => entry.inodes.length > 0);
  if (held.length === 0) return [];
  // Socket inodes are unique across namespaces: one map holds every namespace's tables.
  const sockets = new Map<number, Omit<ListeningPort, 'pid'>>();
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
    readListeningSockets(`/proc/${pid}/net`, sockets);
  }
  const seen = new Set<number>();
  const ports: ListeningPort[] = [];
  for (const { pid, inodes } of held) {
    for (const inode of inodes) {
      const socket = sockets.get(inode);
      if (socket === undefined || seen.has(inode)) continue;
      seen.add(inode);
      ports.push({ ...socket, pid });
    }
  }
  return ports.sort(
    (a, b) => a.port - b.port || a.protocol.localeCompare(b.protocol) || a.address.localeCompare(b.address),
  );
}

/** The processes anywhere on this machine that listen on TCP `port` (a scan of every process: for exclusive_port only). */
export function findTcpListeners(port: number): ListeningPort[] {
  const sockets = readListeningSockets();
  const wanted = new Map([...sockets].filter(([, socket]) => socket.protocol === 'tcp' && socket.port === port));
  if (wanted.size === 0) return [];
  const found: ListeningPort[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    for (const inode of socketInodes(pid)) {
      const socket = wanted.get(inode);
      if (socket !== undefined) found.push({ ...socket, pid });
    }
  }
  // A listener whose holder cannot be seen (another user's, in a container) still counts, as pid 0.
  return found.length > 0 ? found : [...wanted.values()].map((socket) => ({ ...socket, pid: 0 }));
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
