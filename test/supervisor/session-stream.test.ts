// A 2025 session's GET stream whose client does not read: what the stream cannot take waits, the
// newest MAX_WAITING messages, and goes out once the client reads again, the newest last. Before,
// every message went into the response's buffer whatever its client read: 20 such streams and
// 6,400 channel events took the daemon 50 MB, and nothing bounded it. A real HTTP server and a
// real socket whose reader holds a 4 KiB receive buffer and reads nothing until told.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { MAX_WAITING, SessionStream } from '../../src/supervisor/mcp/session-stream.js';

const MESSAGES = 300;
/** 64 KiB a message: 19 MB in all, well past what a socket's buffers take (4 MiB at most here). */
const PAD = 'x'.repeat(64 * 1024);

/** Opens the stream with a 4 KiB receive buffer, says `open`, reads nothing until a line on stdin, then counts messages up to `last`. */
const READER = `
import socket, sys
port, last = int(sys.argv[1]), sys.argv[2].encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(('127.0.0.1', port))
s.sendall(b'GET /mcp HTTP/1.1\\r\\nhost: 127.0.0.1\\r\\naccept: text/event-stream\\r\\n\\r\\n')
data = s.recv(64)
print('open', flush=True)
sys.stdin.readline()
while last not in data:
    chunk = s.recv(1 << 20)
    if not chunk: break
    data += chunk
print(data.count(b'event: message'), flush=True)
`;

test(`a stream that is not read holds ${MAX_WAITING} waiting messages, not all ${MESSAGES}`, async (t) => {
  const stream = new SessionStream();
  const server = createServer((req, res) => void stream.serve(req, res, 'session-1'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    stream.close();
    server.closeAllConnections();
    server.close();
  });
  const reader = spawn('python3', ['-c', READER, String((server.address() as AddressInfo).port), 'last-one']);
  t.after(() => reader.kill('SIGKILL'));
  let out = '';
  reader.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  const said = (what: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (what.test(out) ? resolve() : undefined);
      reader.stdout.on('data', check);
      reader.once('exit', () => (what.test(out) ? resolve() : reject(new Error(`the reader exited: ${out}`))));
      check();
    });
  await said(/open/);
  assert.ok(stream.open);

  for (let index = 0; index < MESSAGES; index++) stream.notify('notifications/message', { index, pad: PAD });
  stream.notify('notifications/message', { last: 'last-one' });
  reader.stdin.write('read\n');
  await said(/open\n\d+\n/);
  const read = Number(/open\n(\d+)\n/.exec(out)![1]);
  t.diagnostic(`messages read: ${read} of ${MESSAGES + 1}`);
  assert.ok(
    read < MESSAGES,
    `${read} of ${MESSAGES + 1} messages read: none was left out while the client did not read`,
  );
});
