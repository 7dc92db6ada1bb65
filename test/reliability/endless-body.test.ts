// A request refused before its body (no token, a Host that is not the daemon, a body past the
// limit) is answered at once and its connection closed, the body not read: a client sending an
// endless chunked body gets the answer while it writes, and then the close.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { MCP_HEADERS } from '../helpers/raw-mcp.js';

const CHUNK = Buffer.alloc(64 * 1024, 'x');
const FRAMED = Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, Buffer.from('\r\n')]);

/** The most a socket's buffers hold in one direction here (the sender's and the receiver's): what a client can write to a daemon that reads none of it. */
function bufferedMost(): number {
  const most = (name: string) => Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2]);
  return most('tcp_wmem') + most('tcp_rmem');
}
/** Where the client gives up and ends its body: twice what the buffers hold, and at least 64 MiB. */
const GIVE_UP_BYTES = Math.max(64 * 1024 * 1024, 2 * bufferedMost());

interface Outcome {
  answer: string;
  /** Body bytes written when the answer's first byte came, and when the daemon closed the connection. */
  writtenAtAnswer: number;
  writtenAtClose: number;
}

/** POSTs /mcp with a chunked body written as fast as the connection takes it, until the daemon closes it or GIVE_UP_BYTES. */
function postEndlessBody(daemon: TestDaemon, headers: Record<string, string>): Promise<Outcome> {
  const { hostname, port, host } = new URL(daemon.url);
  return new Promise((resolve) => {
    // Half open allowed: the client goes on writing after the daemon's FIN, as an endless sender would.
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    let written = 0;
    let answer = '';
    let writtenAtAnswer = -1;
    socket.setEncoding('latin1').on('data', (text: string) => {
      if (answer === '') writtenAtAnswer = written;
      answer += text;
    });
    socket.on('error', () => {}); // the daemon's close reaches a client still writing as a reset
    socket.once('close', () => resolve({ answer, writtenAtAnswer, writtenAtClose: written }));
    const head = Object.entries({ host, ...headers, 'transfer-encoding': 'chunked' })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST /mcp HTTP/1.1\r\n${head}\r\n`);
    const pump = () => {
      while (!socket.destroyed && written < GIVE_UP_BYTES) {
        written += CHUNK.length;
        if (!socket.write(FRAMED)) return void socket.once('drain', pump);
      }
      if (!socket.destroyed) socket.end('0\r\n\r\n');
    };
    pump();
  });
}

test('a refused request with an endless body is answered while it is sent, and closed unread', async (t) => {
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'hive-token-')), 'token');
  writeFileSync(tokenFile, 'sesame\n');
  t.after(() => rmSync(dirname(tokenFile), { recursive: true, force: true }));
  const daemon = await startTestDaemon(t, { args: ['--auth-token-file', tokenFile] });
  const auth = { authorization: 'Bearer sesame' };
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [
      'no token',
      MCP_HEADERS,
      /^HTTP\/1\.1 401 Unauthorized\r\n[\s\S]*\r\n\r\nUnauthorized: send Authorization: Bearer TOKEN with the token from --auth-token-file\n$/,
    ],
    [
      'a Host that is not the daemon',
      { ...MCP_HEADERS, ...auth, host: 'evil.example' },
      /^HTTP\/1\.1 403 Forbidden\r\n[\s\S]*\r\n\r\nForbidden: the Host header "evil.example" does not name this daemon\n$/,
    ],
    [
      'a body past the limit',
      { ...MCP_HEADERS, ...auth },
      /^HTTP\/1\.1 413 Payload Too Large\r\n[\s\S]*"message":"Request body over 4194304 bytes"/,
    ],
  ];
  for (const [what, headers, expected] of cases) {
    const { answer, writtenAtAnswer, writtenAtClose } = await postEndlessBody(daemon, headers);
    assert.ok(
      writtenAtAnswer >= 0 && writtenAtAnswer < GIVE_UP_BYTES,
      `${what}: answered after ${writtenAtAnswer} bytes of body, of the ${GIVE_UP_BYTES} the client would send`,
    );
    assert.ok(
      writtenAtClose < GIVE_UP_BYTES,
      `${what}: the connection stayed open for ${writtenAtClose} bytes of body: the daemon read it`,
    );
    assert.match(answer, expected, `${what}: ${JSON.stringify(answer.slice(0, 200))}`);
    assert.match(answer, /\r\nconnection: close\r\n/i, what);
  }
  const health = await fetch(`${daemon.origin}/healthz`, { headers: auth });
  assert.equal(health.status, 200);
  await health.body?.cancel();
});
