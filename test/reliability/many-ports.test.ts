// A task that listens on thousands of ports: status and list name the first 100 by port and count
// the rest, the todo names ten, and looking for them (a readlink per descriptor, and the namespace's
// socket tables) is done a slice at a time, so the daemon goes on answering meanwhile. Full size
// (HIVE_BATTERY_FULL=1): 15,000 sockets, which made a plain status 1 MB and took 0.8 to 1.0 s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batterySize, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { healthzDuring, latencyFigures } from '../helpers/stall.js';

const SOCKETS = batterySize(300, 15_000);
const LISTED = 100;

/**
 * A Node program that listens on `count` TCP ports, then says so, with the highest, and stays. Each
 * on an address of its own in 127.1.0.0/16: the kernel finds a free port for each at once (on one
 * address, 15,000 took 31 s of searching).
 */
const listener = (count: number) =>
  `const net = require('net'); const ports = [];
   for (let i = 0; i < ${count}; i++) {
     const server = net.createServer().listen(0, '127.1.' + Math.floor(i / 250) + '.' + ((i % 250) + 1), () => {
       ports.push(server.address().port);
       if (ports.length === ${count}) console.log('listening on ${count}, highest ' + Math.max(...ports));
     });
   }
   setInterval(() => {}, 1e6);`;

test(
  `a task listening on ${SOCKETS} ports is shown with ${LISTED} of them and a count of the rest`,
  { timeout: 300_000 },
  async (t) => {
    const daemon = await startTestDaemon(t, {});
    const session = await RawSession.open(daemon.url);
    const command = `ulimit -n ${SOCKETS + 1000} && exec ${process.execPath} -e "$PROGRAM"`;
    const [started] = await session.all('run', [
      {
        command,
        name: 'ports',
        env: { PROGRAM: listener(SOCKETS) },
        wait_for: 'listening on',
        wait_seconds: 30,
        verbose: false,
      },
    ]);
    assert.equal(started.wait_result, 'matched');

    const during = await healthzDuring(daemon.origin, () => session.all('status', [{ id: 'ports', verbose: false }]));
    assert.ok('value' in during.outcome, String((during.outcome as { error: unknown }).error));
    const [status] = during.outcome.value;
    report(t, {
      sockets: SOCKETS,
      status_ms: Math.round(during.callMs),
      answer_bytes: Buffer.byteLength(JSON.stringify(status)),
      healthz_ms: latencyFigures(during.answered),
    });
    assert.equal(status.ports.length, LISTED);
    assert.equal(status.ports_unlisted, SOCKETS - LISTED);
    const numbers = status.ports.map((port: { port: number }) => port.port);
    assert.deepEqual(
      numbers,
      [...numbers].sort((a, b) => a - b),
      'the lowest first',
    );
    assert.ok(
      status.ports.every(
        (port: { protocol: string; address: string }) => port.protocol === 'tcp' && port.address.startsWith('127.1.'),
      ),
    );

    const [listed] = await session.all('list', [{ state: 'running', ports: true }]);
    const row = listed.tasks.find((task: { id: string }) => task.id === 'ports');
    assert.deepEqual([row.ports.length, row.ports_unlisted], [LISTED, SOCKETS - LISTED]);

    // wait_for_port finds a port past the first 100.
    const highest = Number(/highest (\d+)/.exec(started.matched_line)![1]);
    assert.ok(highest > numbers.at(-1));
    const [found] = await session.all('status', [
      { id: 'ports', wait_for_port: highest, wait_seconds: 5, verbose: false },
    ]);
    assert.equal(found.wait_result, 'listening');
    await session.all('kill', [{ id: 'ports', force: true }]);
  },
);
