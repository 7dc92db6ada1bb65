// Which process of this host is at the other end of a TCP connection this process accepted: the
// peer's socket in this network namespace (its local end is our remote one and the other way
// round), its inode, and a process holding that inode (a /proc/PID/fd entry linking to
// socket:[INODE]). The socket is looked up in the kernel's connection hash through sock_diag (the
// native addon), else found in the tables /proc/net/tcp and tcp6.
import { endianness, networkInterfaces } from 'node:os';
import { isIPv4, type Socket } from 'node:net';
import { closeSync, openSync, readdirSync, readFileSync, readlinkSync, readSync, statSync } from 'node:fs';
import { loadNative, type NativeAddon } from './native.js';

/** The two ends of an accepted connection, as net.Socket gives them while it is open. */
export interface TcpEnds {
  localAddress: string;
  localPort: number;
  remoteAddress: string;
  remotePort: number;
}

/** The two ends of `socket`; null once its caller has closed it (Node no longer says them). */
export function endsOf({ localAddress, localPort, remoteAddress, remotePort }: Socket): TcpEnds | null {
  if (localAddress === undefined || localPort === undefined || remoteAddress === undefined || remotePort === undefined)
    return null;
  return { localAddress, localPort, remoteAddress, remotePort };
}

/** The uid of the process that made the calling end of `socket`, where sock_diag tells it; else null. */
export function peerUserOf(socket: Socket): number | null {
  const ends = endsOf(socket);
  try {
    return ends === null ? null : (findPeerSocket(ends)?.uid ?? null);
  } catch {
    return null;
  }
}

/**
 * Who holds the peer's socket: `holder`, a process with an fd on it (null: none seen); `cut`, with
 * none seen: the scan stopped at its bound (SCAN_FDS) before it had read every fd; `unreadable`,
 * processes whose fds could not be read; `cgroupId`, the cgroup v2 its maker was in when it made it
 * (null where sock_diag cannot say), which it keeps wherever it goes; `uid`, its maker's (null: not
 * said), kept the same way; `closed`, with no holder seen:
 * its caller closed or half-closed it by the end of the scan (it has sent its FIN, is an orphan, or
 * is gone), so no process waits on it for an answer.
 */
export interface PeerHolder {
  holder: number | null;
  cut: boolean;
  unreadable: number[];
  cgroupId: bigint | null;
  uid: number | null;
  closed: boolean;
}

/**
 * The peer's socket: its inode (0: an orphan, closed by its process, or in TIME_WAIT), its maker's
 * cgroup and uid (null: unknown), and whether it has sent its FIN (false where sock_diag cannot say).
 */
export interface PeerSocket {
  inode: number;
  cgroupId: bigint | null;
  uid: number | null;
  finSent: boolean;
}

/** TCP states (include/net/tcp_states.h) in which a socket has not sent its FIN. */
const TCP_ESTABLISHED = 1;
const TCP_CLOSE_WAIT = 8;

/**
 * A process holding the peer's end of `connection` (`skipPid`, this process, which holds only our
 * end, left out); null when that end is in no table of this network namespace (another host, or
 * another namespace). Its socket held by no fd (closed, or in flight in a unix socket's message)
 * gives no holder. With none found, the socket is looked up again: a caller that closed it during
 * the scan (one that exits right after sending) is told by then.
 */
export function findPeerHolder(
  connection: TcpEnds,
  tasksPidNamespace: string | null = null,
  skipPid = process.pid,
): PeerHolder | null {
  const socket = findPeerSocket(connection);
  return socket === null ? null : findHolderOf(socket, connection, tasksPidNamespace, skipPid);
}

/** Who holds `socket`, the peer's end of `connection` as findPeerSocket found it (see findPeerHolder). */
export function findHolderOf(
  socket: PeerSocket,
  connection: TcpEnds,
  tasksPidNamespace: string | null = null,
  skipPid = process.pid,
): PeerHolder {
  const { cgroupId, uid } = socket;
  if (socket.inode === 0) return { holder: null, cut: false, unreadable: [], cgroupId, uid, closed: true };
  const found = findSocketHolder(socket.inode, skipPid, tasksPidNamespace);
  if (found.holder !== null) return { ...found, cgroupId, uid, closed: false };
  const after = findPeerSocket(connection);
  const closed = socket.finSent || after === null || after.inode !== socket.inode || after.finSent;
  return { ...found, cgroupId, uid, closed };
}

/**
 * The cgroup v2 our own end of `connection` was made in (an accepted socket takes its listener's,
 * so the daemon's own), from sock_diag; null where it cannot say.
 */
export function findOwnSocketCgroup(connection: TcpEnds): bigint | null {
  const native = loadNative();
  if ('error' in native) return null;
  const swapped = {
    localAddress: connection.remoteAddress,
    localPort: connection.remotePort,
    remoteAddress: connection.localAddress,
    remotePort: connection.localPort,
  };
  return lookUpPeerSocket(native.addon, swapped)?.cgroupId ?? null;
}

/**
 * The inode of the peer's socket (0: an orphan, closed by its process, or in TIME_WAIT), or null
 * when it is not in this namespace.
 */
export function findPeerInode(connection: TcpEnds): number | null {
  return findPeerSocket(connection)?.inode ?? null;
}

/**
 * The peer's socket, or null when it is not in this namespace. Synchronous, so that a call that
 * asks is answered in the order it came (a run is admitted in the turn its request is read, before
 * a later request on another connection is seen).
 */
export function findPeerSocket(connection: TcpEnds): PeerSocket | null {
  const native = loadNative();
  if ('addon' in native) {
    const found = lookUpPeerSocket(native.addon, connection);
    if (found !== undefined) return found;
  }
  const inode = findPeerInodeInTables(connection);
  return inode === null ? null : { inode, cgroupId: null, uid: null, finSent: false };
}

/**
 * The peer's socket through sock_diag, a lookup in the kernel's connection hash (about 0.1 ms
 * here, whatever the table holds); undefined where sock_diag cannot tell: it fails, or
 * does not find our own end either (no inet_diag in this kernel).
 */
function lookUpPeerSocket(
  addon: NativeAddon,
  { localAddress, localPort, remoteAddress, remotePort }: TcpEnds,
): PeerSocket | null | undefined {
  const [ours, peer] = [addressBytes(localAddress), addressBytes(remoteAddress)];
  // An IPv4 peer is looked up by its IPv4 address: the kernel finds an IPv4 socket, or an IPv6 one with a mapped address.
  const [ours4, peer4] = [asIpv4(ours), asIpv4(peer)];
  const [oursKey, peerKey] =
    ours4 !== null && peer4 !== null
      ? [Buffer.from(ours4), Buffer.from(peer4)]
      : [Buffer.from(asIpv6(ours)), Buffer.from(asIpv6(peer))];
  try {
    const found = addon.tcpSocket(peerKey, remotePort, oursKey, localPort);
    if (found !== null) {
      sockDiagFinds = true;
      const finSent = found.state !== TCP_ESTABLISHED && found.state !== TCP_CLOSE_WAIT;
      const cgroupId = found.cgroupId === 0n ? null : found.cgroupId;
      return { inode: found.inode, cgroupId, uid: found.uid, finSent };
    }
    if (sockDiagFinds) return null;
    // Not found: whether sock_diag finds connections here at all is learnt from our own end.
    sockDiagFinds = addon.tcpSocket(oursKey, localPort, peerKey, remotePort) !== null;
    return sockDiagFinds ? null : undefined;
  } catch {
    return undefined;
  }
}

/** Whether sock_diag has found a connection here: its "none" is then believed. */
let sockDiagFinds = false;

/** The peer's inode as findPeerInode gives it, from the tables /proc/net/tcp and tcp6 (read up to its line): where sock_diag cannot tell. */
export function findPeerInodeInTables({ localAddress, localPort, remoteAddress, remotePort }: TcpEnds): number | null {
  const [ours, peer] = [addressBytes(localAddress), addressBytes(remoteAddress)];
  const tables: Array<{ file: string; ours: number[]; peer: number[] }> = [
    { file: 'tcp6', ours: asIpv6(ours), peer: asIpv6(peer) },
  ];
  // An IPv4 peer may have an IPv4 socket (in tcp) or an IPv6 one with a mapped address (in tcp6).
  const [ours4, peer4] = [asIpv4(ours), asIpv4(peer)];
  if (ours4 !== null && peer4 !== null) tables.unshift({ file: 'tcp', ours: ours4, peer: peer4 });
  let found: number | null = null;
  for (const table of tables) {
    // The peer's entry: local = its end, remote = ours. Our own entry has them the other way round.
    const needle = `: ${tableAddress(table.peer, remotePort)} ${tableAddress(table.ours, localPort)} `;
    const inode = searchTable(`/proc/net/${table.file}`, needle);
    if (inode !== null && inode > 0) return inode;
    found ??= inode;
  }
  return found;
}

/** Read at a time from a table: a few dozen of its lines. */
const TABLE_CHUNK_BYTES = 16 * 1024;

/**
 * The inode on the line of table `path` holding `needle`: a live socket's, else 0 (a TIME_WAIT or
 * an orphan of the same four numbers), else null. The kernel makes the table as it is read, by
 * walking every bucket of its connection hash (262,144 here: about 5 ms of CPU for the whole
 * table, whatever it holds), so the reading stops at a live socket's line.
 */
function searchTable(path: string, needle: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null; // no IPv6 here, say
  }
  const buffer = Buffer.alloc(TABLE_CHUNK_BYTES);
  let found: number | null = null;
  let carry = '';
  try {
    for (let bytes = readSync(fd, buffer); bytes > 0; bytes = readSync(fd, buffer)) {
      const text = carry + buffer.toString('latin1', 0, bytes);
      const complete = text.lastIndexOf('\n') + 1;
      carry = text.slice(complete);
      for (let at = text.indexOf(needle); at !== -1 && at < complete; at = text.indexOf(needle, at + 1)) {
        const inode = Number(text.slice(at, text.indexOf('\n', at)).trim().split(/\s+/)[9]);
        if (Number.isInteger(inode) && inode > 0) return inode;
        found = 0;
      }
    }
  } finally {
    closeSync(fd);
  }
  return found;
}

/**
 * The most reads of tasks' processes (fd folders and fd links) one lookup makes (about 60 ms of this
 * thread here): a task that holds more fds, or more processes, cannot hold the thread longer.
 */
export const SCAN_FDS = 8192;
/**
 * An outside process holding more fds than this is read after the other outside ones: 50 local
 * processes holding 19,800 fds each, newer than a client, made its first call read them all (7.5 s
 * of the main thread in process-group mode, where no cgroup tells the caller first).
 */
const MANY_FDS = 1024;
/** The fd links of tasks' processes all lookups read in a second at most: many connections at once cannot hold it either. */
const SCAN_FDS_PER_SECOND = 20_000;

/** What the lookups may still read of tasks' processes now: refilled at SCAN_FDS_PER_SECOND, up to SCAN_FDS. */
const scanBudget = { left: SCAN_FDS, at: performance.now() };

function takeScanBudget(): number {
  const now = performance.now();
  scanBudget.left = Math.min(SCAN_FDS, scanBudget.left + ((now - scanBudget.at) / 1000) * SCAN_FDS_PER_SECOND);
  scanBudget.at = now;
  return Math.floor(scanBudget.left);
}

/**
 * The first process but `skipPid` found with an fd on socket `inode`, and those passed over whose
 * fds cannot be read; `cut` once the scan has read as many fd links of tasks' processes as it may
 * (takeScanBudget). Processes outside the tasks' PID namespace (`tasksPidNamespace`, its
 * `pid:[INODE]`; null: none told apart) are read first and in full, those holding more than
 * MANY_FDS last: no task can make one, so no task can make a caller's lookup read more there.
 * Newest first within each: a caller is most often
 * a process started for the call (hive-bash, curl), so a scan (about 10 us an fd here, more on a
 * loaded machine) mostly ends after a few.
 */
export function findSocketHolder(
  inode: number,
  skipPid: number,
  tasksPidNamespace: string | null = null,
): Pick<PeerHolder, 'holder' | 'cut' | 'unreadable'> {
  const link = `socket:[${inode}]`;
  const unreadable: number[] = [];
  const pids = newestFirst(readdirSync('/proc').map(Number)).filter(
    (pid) => Number.isInteger(pid) && pid > 0 && pid !== skipPid,
  );
  // Each process's namespace read as it comes: the tasks' wait for the bounded pass, the others are
  // read at once, so a caller newer than the tasks' processes is found before most are even looked at;
  // of those, one holding many fds waits for the others (a caller holds few).
  const rest: number[] = [];
  const heavy: number[] = [];
  for (const pid of pids) {
    if (tasksPidNamespace === null || pidNamespaceOf(pid) === tasksPidNamespace) rest.push(pid);
    else if (fdCount(pid) > MANY_FDS) heavy.push(pid);
    else if (scanFds([pid], link, Infinity, unreadable).holder !== null) return { holder: pid, cut: false, unreadable };
  }
  const outside = scanFds(heavy, link, Infinity, unreadable);
  if (outside.holder !== null) return { holder: outside.holder, cut: false, unreadable };
  const budget = takeScanBudget();
  const second = scanFds(rest, link, budget, unreadable);
  scanBudget.left -= second.read;
  return { holder: second.holder, cut: second.cut, unreadable };
}

/**
 * Reads the fds of `pids` for `link`, at most `budget` reads (a process's fd folder counts as one,
 * and each link; its count is read first): the holder, or whether the bound cut it short.
 */
function scanFds(pids: number[], link: string, budget: number, unreadable: number[]) {
  let read = 0;
  for (const pid of pids) {
    // Its fds counted first (the folder's size, Linux 6.2+): listing 20,000 of them costs as much as reading many.
    if (budget !== Infinity && read + 1 + fdCount(pid) > budget) return { holder: null, cut: true, read };
    read++;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch (error) {
      const { code } = error as NodeJS.ErrnoException;
      if (code === 'EACCES' || code === 'EPERM') unreadable.push(pid);
      continue; // ENOENT: gone meanwhile
    }
    for (const fd of fds) {
      if (read++ >= budget) return { holder: null, cut: true, read };
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === link) return { holder: pid, cut: false, read };
      } catch (error) {
        // A process this one may list but not trace (another user namespace's root, say): unread.
        const { code } = error as NodeJS.ErrnoException;
        if (code !== 'EACCES' && code !== 'EPERM') continue; // closed meanwhile
        unreadable.push(pid);
        break;
      }
    }
  }
  return { holder: null, cut: false, read };
}

/** The PID namespace of process `pid` (`pid:[INODE]`), or null where it cannot be read. */
export function pidNamespaceOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/** Whether `address` is this host's: loopback, or an address of one of its interfaces. */
export function isLocalAddress(address: string): boolean {
  const v4 = asIpv4(addressBytes(address));
  if (v4 !== null ? v4[0] === 127 : address === '::1') return true;
  const text = v4 !== null ? v4.join('.') : address.replace(/%.*$/, '');
  return Object.values(networkInterfaces()).some((list) => list?.some((entry) => entry.address === text));
}

/** How many fds process `pid` holds, as its fd folder's size says (0 where the kernel does not say, or it cannot be read). */
function fdCount(pid: number): number {
  try {
    return statSync(`/proc/${pid}/fd`).size;
  } catch {
    return 0; // gone, or not this process's to read: the listing says
  }
}

/**
 * `pids` from the one given last down, as the kernel hands them out: from ns_last_pid down to 1,
 * then down from pid_max (pids wrap around there: on this machine's 32,768 within hours).
 */
function newestFirst(pids: number[]): number[] {
  let last: number;
  let max: number;
  try {
    last = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'latin1'));
    max = Number(readFileSync('/proc/sys/kernel/pid_max', 'latin1'));
  } catch {
    return pids.sort((a, b) => b - a);
  }
  const age = (pid: number) => (((last - pid) % max) + max) % max;
  return pids.sort((a, b) => age(a) - age(b));
}

/** The bytes of an address as Node prints it (IPv4, or IPv6 with a zone or a mapped IPv4 tail). */
function addressBytes(address: string): number[] {
  if (isIPv4(address)) return address.split('.').map(Number);
  let text = address.replace(/%.*$/, '');
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4 !== null) text = `${text.slice(0, v4.index)}0:0`;
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const [left, right] = [groups(head), groups(tail)];
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  const bytes = words.flatMap((word) => [word >> 8, word & 0xff]);
  if (v4 !== null) bytes.splice(12, 4, ...v4.slice(1).map(Number));
  return bytes;
}

/** Four bytes of an IPv4 address, or of an IPv6 one that maps one (::ffff:a.b.c.d); else null. */
function asIpv4(bytes: number[]): number[] | null {
  if (bytes.length === 4) return bytes;
  const mapped = bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : null;
}

/** Sixteen bytes: an IPv4 address as an IPv6 one maps it. */
const asIpv6 = (bytes: number[]): number[] =>
  bytes.length === 16 ? bytes : [...new Array<number>(10).fill(0), 0xff, 0xff, ...bytes];

const LITTLE_ENDIAN = endianness() === 'LE';

/** `0100007F:1D09`: the kernel prints each 32-bit word of the address in the host's byte order, then the port. */
function tableAddress(bytes: number[], port: number): string {
  let hex = '';
  for (let at = 0; at < bytes.length; at += 4) {
    const word = bytes.slice(at, at + 4);
    if (LITTLE_ENDIAN) word.reverse();
    hex += word.map((byte) => byte.toString(16).padStart(2, '0')).join('');
  }
  return `${hex.toUpperCase()}:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}
