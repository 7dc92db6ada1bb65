// Bodies sent in part and never finished, or parked in a wait, hold the daemon's memory only up to
// a bound: past 32 MiB of them in all, the next is answered 503 and closed, and what they held is
// given back when their connections go, or their answers.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { modernMeta, modernRequest } from '../helpers/modern-client.js';
import { waitFor } from '../helpers/processes.js';

/** Each sender's body: just under the 4 MiB a body may have, announced whole and sent all but its end. */
const DECLARED = 4 * 1024 * 1024;
const SENT = DECLARED - 64 * 1024;
/** Enough senders that their bodies pass the 32 MiB bound by a few. */
const SENDERS = 10;

interface Sender {
  socket: Socket;
  answer: string;
}

/** POSTs /mcp announcing DECLARED bytes of body and sends SENT of them, then waits. */
function sendPart(daemon: TestDaemon): Sender {
  const { hostname, port, host } = new URL(daemon.url);
  const socket = connect({ host: hostname, port: Number(port) });
  const sender: Sender = { socket, answer: '' };
  socket.setEncoding('latin1').on('data', (text: string) => (sender.answer += text));
  socket.on('error', () => {}); // a reset after the daemon's close
  const head = `POST /mcp HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\ncontent-length: ${DECLARED}\r\n\r\n`;
  socket.write(head);
  socket.write(Buffer.alloc(SENT, ' '));
  return sender;
}

test(
  'half-sent bodies past 32 MiB in all are refused with 503, and the daemon serves once they go',
  { timeout: 120_000 },
  async (t) => {
    const daemon = await startTestDaemon(t, {});
    const senders = Array.from({ length: SENDERS }, () => sendPart(daemon));
    t.after(() => senders.forEach((sender) => sender.socket.destroy()));

    // 10 bodies of 3.94 MiB pass 32 MiB by 7.4 MiB: 8 can be held whole, so 2 or more are refused.
    const refused = () => senders.filter((sender) => sender.answer.startsWith('HTTP/1.1 503'));
    assert.ok(
      await waitFor(() => refused().length >= 2, 60_000),
      `${refused().length} of ${SENDERS} refused: the daemon went on holding the bodies`,
    );
    assert.ok(refused().length < SENDERS, 'every body was refused, although 8 fit');
    assert.match(refused()[0]!.answer, /\r\nretry-after: 1\r\n/i);
    assert.match(refused()[0]!.answer, /the bodies of requests being read or answered hold 32 MiB in all/);
    const health = await fetch(new URL('/healthz', daemon.url));
    assert.equal(health.status, 200, 'GET /healthz has no body and is served while the bodies are held');

    senders.forEach((sender) => sender.socket.destroy());
    // Served once the held bodies are given back (their close may reach the daemon a little later).
    const served = await waitFor(async () => {
      try {
        const tools = await connectClient(t, daemon.url);
        return (await tools.ok('run', { command: 'echo served', wait_seconds: 20 })).stdout_tail === 'served\n';
      } catch {
        return false;
      }
    }, 30_000);
    assert.ok(served, 'a run was refused after the half-sent bodies went away');
  },
);

test('bodies of 4 MiB parked in status waits count until answered: past 32 MiB the next is refused with 503', async (t) => {
  const daemon = await startTestDaemon(t, {});
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: 'sleep 600', name: 'long', wait_seconds: 0 });
  // A client's _meta of 3.9 MiB: parsed, about three times that, held as long as the wait.
  const meta = { ...modernMeta(), pad: 'x'.repeat(SENT - 1024) };
  const waits = Array.from({ length: SENDERS }, () =>
    modernRequest(daemon.url, 'tools/call', { name: 'status', arguments: { id: 'long', wait_seconds: 30 } }, { meta }),
  );
  const statuses: number[] = [];
  waits.forEach((wait) => void wait.then((answer) => statuses.push(answer.status)));
  // Before, every one was taken and held: 64 of them took the daemon from 106 to 879 MB.
  assert.ok(
    await waitFor(() => statuses.filter((status) => status === 503).length >= 2, 60_000),
    `answered ${JSON.stringify(statuses)} while the others wait: none refused`,
  );
  await tools.ok('kill', { id: 'long', force: true });
  const answers = await Promise.all(waits);
  const served = answers.filter((answer) => answer.status === 200);
  assert.ok(served.length >= 1 && served.length <= 8, `${served.length} of ${SENDERS} waited and were answered`);
  for (const answer of served) assert.equal(answer.body.result.structuredContent.state, 'killed');
  assert.equal((await tools.ok('run', { command: 'echo served', wait_seconds: 20 })).stdout_tail, 'served\n');
});
