// The peer of an accepted TCP connection, found through sock_diag and in the kernel's tables (the
// two agree) and /proc: the process that holds its socket, over IPv4, IPv6 and an IPv4 client of a
// dual-stack listener, and the cgroup and user its maker was in and was; none once the peer has closed it, and no entry at all once it has reset it;
// nothing for ends that no connection of this host has, a listener on the peer's port included;
// and which addresses are this host's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { readFileSync, statSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { cgroup2Mount } from '../../src/process/cgroups.js';
import {
  findPeerHolder,
  findPeerInode,
  findPeerInodeInTables,
  isLocalAddress,
  type TcpEnds,
} from '../../src/process/tcp-peer.js';

/** The id of process `pid`'s cgroup v2 (its folder's inode), as sock_diag gives a socket's maker's. */
function cgroupIdOf(pid: number): bigint {
  const path = /^0::(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))![1]!;
  return statSync(join(cgroup2Mount()!, path), { bigint: true }).ino;
}

/** The ends of an accepted `socket`, read while it is open. */
const endsOf = (socket: Socket): TcpEnds => ({
  localAddress: socket.localAddress!,
  localPort: socket.localPort!,
  remoteAddress: socket.remoteAddress!,
  remotePort: socket.remotePort!,
});

/**
 * A listener on `host`, the socket it accepts from a child process connecting to `connectHost`, and
 * its ends (read while it is open). `reset`: once its ends are read, the child sends its first line
 * and resets the connection.
 */
async function acceptFromChild(
  t: TestContext,
  host: string,
  connectHost: string,
  reset = false,
): Promise<{ accepted: Socket; ends: TcpEnds; childPid: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  // The ends are read as the connection is accepted, and only then is the child told to reset it:
  // a reset one has none (a connection reset before it is accepted has none at all).
  const accepted = new Promise<{ socket: Socket; ends: TcpEnds }>((resolve) =>
    server.once('connection', (socket: Socket) => {
      socket.on('error', () => {}).resume();
      t.after(() => socket.destroy());
      const ends = endsOf(socket);
      if (reset) socket.write('go');
      resolve({ socket, ends });
    }),
  );
  const then = reset ? `s.once('data', () => s.write('hello\\n', () => s.resetAndDestroy()))` : '';
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s = require('net').connect(${port}, ${JSON.stringify(connectHost)}, () => { ${then} }); setInterval(() => {}, 1000)`,
    ],
    { stdio: 'ignore' },
  );
  t.after(() => child.kill('SIGKILL'));
  const { socket, ends } = await accepted;
  return { accepted: socket, ends, childPid: child.pid! };
}

for (const [host, connectHost] of [
  ['127.0.0.1', '127.0.0.1'],
  ['::1', '::1'],
  ['::', '127.0.0.1'],
]) {
  test(`the peer of a connection to ${host} from ${connectHost} is the process holding its socket`, async (t) => {
    const { ends, childPid } = await acceptFromChild(t, host!, connectHost!);
    assert.deepEqual(findPeerHolder(ends), {
      holder: childPid,
      cut: false,
      unreadable: [],
      cgroupId: cgroupIdOf(childPid),
      uid: process.getuid!(),
      closed: false,
    });
    const inode = findPeerInode(ends);
    assert.ok(
      inode! > 0 && inode === findPeerInodeInTables(ends),
      `sock_diag's ${inode}, the tables' ${findPeerInodeInTables(ends)}`,
    );
  });
}

test('a peer that closed its socket is held by no process', async (t) => {
  const { accepted, ends, childPid } = await acceptFromChild(t, '127.0.0.1', '127.0.0.1');
  const ended = once(accepted, 'end');
  process.kill(childPid, 'SIGKILL');
  await ended;
  assert.equal(findPeerInode(ends), 0, 'its socket is an orphan');
  assert.equal(findPeerInodeInTables(ends), 0, 'its socket is an orphan in the table');
  // An orphan's cgroup is not said.
  assert.deepEqual(findPeerHolder(ends), {
    holder: null,
    cut: false,
    unreadable: [],
    cgroupId: null,
    uid: process.getuid!(),
    closed: true,
  });
});

test("a peer's socket tells the user its maker was", async (t) => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  // python3 from /usr/bin, which any user may run (this Node may be in a folder only root may enter).
  const connect = `import socket, time; s = socket.create_connection(('127.0.0.1', ${(server.address() as AddressInfo).port})); time.sleep(60)`;
  const child = spawn('python3', ['-c', connect], { stdio: 'ignore', uid: 65534 });
  t.after(() => child.kill('SIGKILL'));
  const socket = await accepted;
  t.after(() => socket.destroy());
  const peer = findPeerHolder(endsOf(socket))!;
  assert.deepEqual([peer.holder, peer.uid], [child.pid, 65534]);
});

/**
 * Python that connects to `port`, half-closes its socket or not (`shut`), puts it in flight (in a
 * message on a unix socket pair that nobody reads: held by no fd) and says `ready`, then waits.
 */
const inFlight = (port: number, shut: boolean) => `
import socket, sys, time
s = socket.create_connection(('127.0.0.1', ${port}))
${shut ? 's.shutdown(socket.SHUT_WR)' : ''}
a, b = socket.socketpair()
socket.send_fds(a, [b'x'], [s.fileno()])
s.close()
print('ready', flush=True)
time.sleep(60)
`;

for (const shut of [true, false])
  test(`a socket in flight ${shut ? 'that its caller half-closed is closed' : 'and open is not closed'}`, async (t) => {
    // Half-open: the server's end stays open after the caller's FIN, as the daemon's does.
    const server = createServer({ allowHalfOpen: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const child = spawn('python3', ['-c', inFlight((server.address() as AddressInfo).port, shut)]);
    t.after(() => child.kill('SIGKILL'));
    const [socket] = await accepted;
    socket.on('error', () => {}).resume();
    t.after(() => socket.destroy());
    const ends = endsOf(socket);
    await once(child.stdout, 'data');
    const peer = findPeerHolder(ends)!;
    assert.deepEqual([peer.holder, peer.closed], [null, shut]);
  });

test('a peer that reset its connection leaves no entry: only its local address tells it from another host', async (t) => {
  const { accepted, ends } = await acceptFromChild(t, '127.0.0.1', '127.0.0.1', true);
  // After its ECONNRESET, which may have come already.
  await new Promise((resolve) => (accepted.closed ? resolve(null) : accepted.once('close', resolve)));
  assert.equal(findPeerHolder(ends), null);
  assert.equal(findPeerInodeInTables(ends), null);
  assert.equal(isLocalAddress(ends.remoteAddress), true);
});

test("this host's addresses are local, others are not", () => {
  const own = Object.values(networkInterfaces())
    .flat()
    .map((entry) => entry!.address);
  for (const address of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', ...own])
    assert.equal(isLocalAddress(address), true, address);
  for (const address of ['192.0.2.1', '::ffff:192.0.2.1', '2001:db8::1']) assert.equal(isLocalAddress(address), false);
  const ends = { localAddress: '127.0.0.1', localPort: 1, remoteAddress: '192.0.2.1', remotePort: 2 };
  assert.equal(findPeerInode(ends), null, 'ends that no connection of this host has are in no table');
  assert.equal(findPeerInodeInTables(ends), null);
});

test("a listener on the peer's port is not taken for the peer's socket", async (t) => {
  // The kernel's exact lookup falls back to a listener on the port when no connection matches.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const ends = { localAddress: '127.0.0.1', localPort: 1, remoteAddress: '127.0.0.1', remotePort: port };
  assert.equal(findPeerInode(ends), null);
  assert.equal(findPeerInodeInTables(ends), null);
});
