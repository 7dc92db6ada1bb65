// Clients that open connections and send nothing, or their headers a line at a time, cannot lock a
// well-behaved client out: past the limits (total and per peer) the connection first in line is
// closed for the new one, and the daemon's file descriptors stay far from its limit. The limits come
// through HIVE_BASH_* variables, which a daemon without them ignores (it then runs out of descriptors).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { request as httpRequest, Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { getAfresh, report } from '../helpers/battery.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

const LIMIT = 32;
const PER_PEER = 16;
/** Slow sockets each flooding peer opens in each wave: with two peers, well past what FD_LIMIT leaves the daemon. */
const WAVE = 150;
/** The daemon's file descriptor limit here: room for its own files and LIMIT connections, not for a wave. */
const FD_LIMIT = 256;
const FLOOD_PEERS = ['127.0.0.2', '127.0.0.3'];

/** What each slow socket received from the daemon. */
const received = new Map<Socket, string>();

/** Sockets that start a POST /mcp (or send nothing, `silent`) and never finish its headers; resolves once all have connected. */
async function openSlowSockets(
  daemon: TestDaemon,
  count: number,
  localAddress: string,
  silent = false,
): Promise<Socket[]> {
  const { hostname, port } = new URL(daemon.url);
  const start = silent ? '' : `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\n`;
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Socket>((resolve) => {
          const socket = connect({ host: hostname, port: Number(port), localAddress });
          socket.on('error', () => resolve(socket)); // closed or reset by the daemon: a flood expects no better
          socket.once('connect', () => {
            socket.write(start);
            received.set(socket, '');
            socket
              .setEncoding('latin1')
              .on('data', (text: string) => received.set(socket, received.get(socket) + text));
            resolve(socket);
          });
        }),
    ),
  );
}

const stillOpen = (sockets: Socket[]) => sockets.filter((socket) => !socket.destroyed).length;

test('slow sockets past the connection limits leave /healthz and runs served, and nothing is lost', async (t) => {
  const daemon = await startTestDaemon(t, {
    wrapper: ['prlimit', `--nofile=${FD_LIMIT}:${FD_LIMIT}`, '--'],
    env: {
      HIVE_BASH_MAX_CONNECTIONS: String(LIMIT),
      HIVE_BASH_MAX_CONNECTIONS_PER_PEER: String(PER_PEER),
      // Far off: only the limits close the slow sockets in this test.
      HIVE_BASH_HEADERS_TIMEOUT_SECONDS: '600',
      HIVE_BASH_REQUEST_TIMEOUT_SECONDS: '600',
    },
  });
  const flood: Socket[] = [];
  t.after(() => flood.forEach((socket) => socket.destroy()));
  for (const peer of FLOOD_PEERS) flood.push(...(await openSlowSockets(daemon, WAVE, peer)));

  const first = await getAfresh(daemon.origin, '/healthz');
  assert.equal(first.status, 200, first.body);
  const tools = await connectClient(t, daemon.url);
  assert.equal((await tools.ok('run', { command: 'echo served' })).stdout_tail, 'served\n');

  // A second wave while the client's connection sits idle between calls.
  for (const peer of FLOOD_PEERS) flood.push(...(await openSlowSockets(daemon, WAVE, peer)));
  assert.equal((await tools.ok('run', { command: 'echo again' })).stdout_tail, 'again\n');
  const listed = await tools.ok('list', {});
  assert.deepEqual(listed.tasks.map((task: { command: string }) => task.command).sort(), ['echo again', 'echo served']);
  const health = JSON.parse((await getAfresh(daemon.origin, '/healthz')).body);
  assert.equal(health.tasks.done, 2);
  assert.ok(health.connections.open <= LIMIT, `${health.connections.open} connections open, over ${LIMIT}`);
  assert.equal(health.connections.refused, 0, 'a connection with no request in flight was always there to close');

  // Each flooding peer is held to its share; the daemon's own view and the flood's agree.
  for (const peer of FLOOD_PEERS) {
    const own = flood.filter((socket) => socket.localAddress === peer);
    const settled = await waitFor(() => stillOpen(own) <= PER_PEER, 60_000);
    assert.ok(settled, `${stillOpen(own)} of ${peer}'s slow sockets still open, over ${PER_PEER}`);
  }
  const fds = readdirSync(`/proc/${daemon.child.pid}/fd`).length;
  assert.ok(fds < FD_LIMIT - LIMIT, `the daemon holds ${fds} file descriptors of ${FD_LIMIT}`);
  report(t, {
    case: 'connection-flood',
    slow_sockets: flood.length,
    closed_for_room: health.connections.closed_for_room,
    daemon_fds: fds,
  });
});

test(
  'a connection that does not finish its headers in time is answered 408 and closed',
  { timeout: 60_000 },
  async (t) => {
    const daemon = await startTestDaemon(t, {
      env: { HIVE_BASH_HEADERS_TIMEOUT_SECONDS: '1', HIVE_BASH_REQUEST_TIMEOUT_SECONDS: '2' },
    });
    const silent = await openSlowSockets(daemon, 1, '127.0.0.1', true);
    const slow = await openSlowSockets(daemon, 1, '127.0.0.1');
    for (const socket of [...silent, ...slow]) {
      if (!socket.destroyed) await once(socket, 'close');
      assert.match(received.get(socket)!, /^HTTP\/1\.1 408 Request Timeout\r\n/);
    }
  },
);

test('a wait longer than the timeouts, and a keep-alive connection idle past them, are not cut', async (t) => {
  const daemon = await startTestDaemon(t, {
    env: { HIVE_BASH_HEADERS_TIMEOUT_SECONDS: '1', HIVE_BASH_REQUEST_TIMEOUT_SECONDS: '1' },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());
  const healthOnKeptConnection = () =>
    new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
      const req = httpRequest(`${daemon.origin}/healthz`, { agent }, (res) => {
        res.resume().on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
      });
      req.on('error', reject).end();
    });
  assert.equal((await healthOnKeptConnection()).status, 200);
  const tools = await connectClient(t, daemon.url);
  const { id } = await tools.ok('run', { command: 'sleep 3; echo waited', wait_seconds: 0 });
  // Three seconds of waiting inside one request, while the kept connection sits idle.
  const waited = await tools.ok('status', { id, wait_seconds: 30 });
  assert.equal(waited.state, 'done');
  assert.equal(waited.stdout_tail, 'waited\n');
  assert.deepEqual(await healthOnKeptConnection(), { status: 200, reused: true });
});
