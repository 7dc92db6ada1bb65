// Answers stay bounded for clients that ask for much and read nothing. A status of many ids shares
// a budget of tail bytes (each task's tails cut to fit, and the answer says so); a connection has
// one answer made at a time, the next once that one was taken; and answers not taken hold 32 MiB
// at most in all, past which the connections whose answers waited longest are closed; a batch's
// answers share 16 MiB. Full size
// (HIVE_BATTERY_FULL=1) is the case that took the daemon to 8.56 GB: 100 tasks with tails of
// 64 KiB of control bytes, each JSON-escaped to six bytes, and 28 sockets that never read.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { batterySize, healthz, processFigures, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';
import { waitFor } from '../helpers/processes.js';
import { latencyFigures } from '../helpers/stall.js';

const TASKS = batterySize(20, 100);
const SOCKETS = batterySize(10, 28);
/** Requests each socket sends in one write. */
const PIPELINED = 3;
/** How long the sockets that do not read are watched: the daemon has made every answer it will by then. */
const WATCH_MS = 5000;
/** The tails of several tasks take this much at most; a control byte is six in JSON, and the text has the tails too. */
const TAILS_BUDGET = 128 * 1024;
/** The bytes of answers not taken that the daemon holds at most. */
const MAX_UNSENT_BYTES = 32 * 1024 * 1024;
/** What the daemon's RSS may grow by while the sockets are open. */
const MOST_GROWTH_KB = 192 * 1024;

/** A raw POST of `body` to /mcp in `session`, as text ready to write to a socket. */
function post(daemon: TestDaemon, session: string, body: object): string {
  const text = JSON.stringify(body);
  const head = [
    'POST /mcp HTTP/1.1',
    `host: ${new URL(daemon.url).host}`,
    ...Object.entries({ ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' }).map(
      ([name, value]) => `${name}: ${value}`,
    ),
    `content-length: ${Buffer.byteLength(text)}`,
  ];
  return `${head.join('\r\n')}\r\n\r\n${text}`;
}

/** A new session's id (the raw posts below go in it). */
async function openSessionId(daemon: TestDaemon): Promise<string> {
  const res = await fetch(daemon.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
  await res.text();
  return res.headers.get('mcp-session-id')!;
}

/** Sockets that each send the requests `requestsOf` gives it (ids of its own: ids in flight in a session are distinct) in one write, and never read. */
function openDeafSockets(daemon: TestDaemon, count: number, requestsOf: (socket: number) => string): Socket[] {
  const { hostname, port } = new URL(daemon.url);
  return Array.from({ length: count }, (_, index) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.on('error', () => {}); // closed by the daemon
    socket.pause();
    socket.write(requestsOf(index));
    return socket;
  });
}

/** Watches the daemon for `ms`: its peak RSS, and the latency of /healthz asked one after another. */
async function watchDaemon(daemon: TestDaemon, ms: number): Promise<{ peakKb: number; latencies: number[] }> {
  let peakKb = 0;
  const latencies: number[] = [];
  for (const end = performance.now() + ms; performance.now() < end;) {
    const asked = performance.now();
    await healthz(daemon.origin);
    latencies.push(performance.now() - asked);
    peakKb = Math.max(peakKb, processFigures(daemon.child.pid!).rssKb);
    await sleep(20);
  }
  return { peakKb, latencies };
}

test('answers stay bounded for clients that ask for much and never read', { timeout: 600_000 }, async (t) => {
  const daemon = await startTestDaemon(t, {});
  const session = await RawSession.open(daemon.url);
  const sessionId = await openSessionId(daemon);
  const ids = Array.from({ length: TASKS }, (_, i) => `ctl-${i}`);
  const command = "head -c 65536 /dev/zero | tr '\\0' '\\1'; head -c 65536 /dev/zero | tr '\\0' '\\2' >&2";
  await session.all(
    'run',
    ids.map((name) => ({ name, command, wait_seconds: 10, verbose: false })),
  );
  const status = { name: 'status', arguments: { ids, tail_bytes: 65536, peek: true } };

  await t.test('a status of many ids keeps within its budget of tails, and says so', async () => {
    const res = await fetch(daemon.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: status }),
    });
    const text = await res.text();
    const share = Math.floor(TAILS_BUDGET / (2 * TASKS));
    report(t, { tasks: TASKS, answer_bytes: Buffer.byteLength(text), tail_bytes: share });
    // The tails, six bytes a byte in JSON, in the text and the structured content, and a little for the rest.
    assert.ok(
      Buffer.byteLength(text) < 12 * TAILS_BUDGET + TASKS * 4096,
      `an answer of ${Buffer.byteLength(text)} bytes`,
    );
    const { result } = JSON.parse(text);
    assert.equal(result.structuredContent.tail_bytes, share);
    for (const task of result.structuredContent.tasks) {
      assert.equal(task.stdout_tail, '\x01'.repeat(share), task.id);
      assert.equal(task.stderr_tail, '\x02'.repeat(share), task.id);
    }
    assert.match(
      result.content[0].text,
      new RegExp(
        `^wait_result ended: ${TASKS} of ${TASKS} ended; each tail cut to ${share} bytes, its share of the ${TAILS_BUDGET} the tails of several tasks take at most\n`,
      ),
    );
  });

  await t.test('sockets that send many status calls and never read hold the daemon to a bounded buffer', async () => {
    const before = processFigures(daemon.child.pid!).rssKb;
    const requestsOf = (socket: number) =>
      Array.from({ length: PIPELINED }, (_, i) =>
        post(daemon, sessionId, { jsonrpc: '2.0', id: `deaf-${socket}-${i}`, method: 'tools/call', params: status }),
      ).join('');
    const deaf = openDeafSockets(daemon, SOCKETS, requestsOf);
    t.after(() => deaf.forEach((socket) => socket.destroy()));
    const watched = await watchDaemon(daemon, WATCH_MS);
    const [served] = await session.batch('status', [{ id: ids[0], peek: true, verbose: false }]);
    report(t, {
      sockets: SOCKETS,
      pipelined: PIPELINED,
      rss_before_kb: before,
      rss_peak_kb: watched.peakKb,
      healthz_ms: latencyFigures(watched.latencies),
      connections: (await healthz(daemon.origin)).connections,
    });
    assert.ok(
      watched.peakKb - before < MOST_GROWTH_KB,
      `RSS ${before} kB before, ${watched.peakKb} kB with ${SOCKETS} sockets that do not read`,
    );
    assert.equal(served!.structured.state, 'done', 'another client is served meanwhile');
    deaf.forEach((socket) => socket.destroy());
  });

  await t.test('answers not taken past 32 MiB in all close the connections whose answers waited longest', async () => {
    // An output of 1 MiB of backslashes answers with about 4 MB (two bytes each in JSON, in the text
    // and the structured result), a batch of four of them with about 12 MB: six such answers pass
    // 32 MiB, even with a few MB of each in the kernel's buffers.
    await session.all('run', [
      { name: 'big', command: "head -c 1048576 /dev/zero | tr '\\0' '\\\\'", wait_seconds: 10 },
    ]);
    const requestOf = (socket: number) =>
      post(
        daemon,
        sessionId,
        Array.from({ length: 4 }, (_, i) => ({
          jsonrpc: '2.0',
          id: `big-${socket}-${i}`,
          method: 'tools/call',
          params: { name: 'output', arguments: { id: 'big', max_bytes: 1_048_576 } },
        })),
      );
    const before = processFigures(daemon.child.pid!).rssKb;
    const closedBefore: number = (await healthz(daemon.origin)).connections.closed_unread ?? 0;
    const deaf = openDeafSockets(daemon, 6, requestOf);
    t.after(() => deaf.forEach((socket) => socket.destroy()));
    const closed = await waitFor(
      async () => (await healthz(daemon.origin)).connections.closed_unread > closedBefore,
      30_000,
    );
    const { connections } = await healthz(daemon.origin);
    report(t, { rss_before_kb: before, rss_kb: processFigures(daemon.child.pid!).rssKb, connections });
    assert.ok(closed, 'no connection was closed for answers it did not take');
    assert.ok(connections.unsent_bytes <= MAX_UNSENT_BYTES, `${connections.unsent_bytes} bytes of answers held`);
  });

  await t.test('a batch whose answers would pass 16 MiB answers the rest with an error', async () => {
    // Each output of 1 MiB of backslashes answers with about 4 MB: three fit, the rest do not.
    const body = Array.from({ length: 6 }, (_, i) => ({
      jsonrpc: '2.0',
      id: `batch-${i}`,
      method: 'tools/call',
      params: { name: 'output', arguments: { id: 'big', max_bytes: 1_048_576 } },
    }));
    const res = await fetch(daemon.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    report(t, { batch_answer_bytes: Buffer.byteLength(text) });
    const answers = JSON.parse(text) as Array<{
      id: string;
      result?: unknown;
      error?: { code: number; message: string };
    }>;
    // The first to be answered fit (the calls run side by side: any of them).
    const fitted = answers.filter((answer) => answer.result !== undefined).length;
    assert.ok(fitted >= 1 && fitted < answers.length, `${fitted} of ${answers.length} answers fit`);
    for (const answer of answers.filter((each) => each.result === undefined)) {
      assert.equal(answer.error?.code, -32010, answer.id);
      assert.match(
        answer.error.message,
        /^Request answered with nothing: the answers of this batch before it hold \d+ bytes, and with this one's they would pass the 16777216 bytes a batch's answer may have; send it in a POST of its own, or ask for less \(tail_bytes, max_bytes\)$/,
      );
    }
    assert.ok(Buffer.byteLength(text) <= 16 * 1024 * 1024 + 4096, `a batch answer of ${Buffer.byteLength(text)} bytes`);
  });
});

/**
 * `python3 -c SCRIPT HOST PORT COUNT`: COUNT sockets with receive buffers of 4 KiB that each send
 * the request on stdin's first line (a 2026-07-28 POST, \n for \r\n) and never read; says `sent`,
 * then holds them until stdin closes.
 */
const DEAF_LISTENERS = `
import socket, sys
host, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
request = sys.stdin.readline().rstrip('\\n').replace('\\\\r\\\\n', '\\r\\n').encode()
sockets = []
for _ in range(count):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((host, port))
    s.sendall(request)
    sockets.append(s)
print('sent', flush=True)
sys.stdin.read()
`;

test(
  'task notification streams hold one notification each for clients that never read',
  { timeout: 600_000 },
  async (t) => {
    const daemon = await startTestDaemon(t, {});
    const session = await RawSession.open(daemon.url);
    // Each stream past what the kernel's buffers take (about 4 MiB here): 100 tasks' results.
    const ids = Array.from({ length: 100 }, (_, i) => `ctl-${i}`);
    const command = "head -c 65536 /dev/zero | tr '\\0' '\\1'; head -c 65536 /dev/zero | tr '\\0' '\\2' >&2";
    await session.all(
      'run',
      ids.map((name) => ({ name, command, wait_seconds: 10, verbose: false })),
    );
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    };
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'subscriptions/listen',
      params: { notifications: { taskIds: ids }, _meta: meta },
    });
    const { hostname, port } = new URL(daemon.url);
    const head = [
      `POST ${new URL(daemon.url).pathname} HTTP/1.1`,
      `host: ${hostname}:${port}`,
      'content-type: application/json',
      'accept: application/json, text/event-stream',
      'mcp-protocol-version: 2026-07-28',
      'mcp-method: subscriptions/listen',
      `content-length: ${Buffer.byteLength(body)}`,
    ];
    const before = processFigures(daemon.child.pid!).rssKb;
    const deaf = spawn('python3', ['-c', DEAF_LISTENERS, hostname, port, String(SOCKETS * 4)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    t.after(() => deaf.kill('SIGKILL'));
    deaf.stdin.write(`${head.join('\\r\\n')}\\r\\n\\r\\n${body}\n`);
    await once(deaf.stdout, 'data');
    const { peakKb, latencies } = await watchDaemon(daemon, WATCH_MS);
    report(t, {
      streams: SOCKETS * 4,
      tasks: ids.length,
      rss_before_kb: before,
      rss_peak_kb: peakKb,
      healthz_ms: latencyFigures(latencies),
    });
    assert.ok(peakKb - before < 64 * 1024, `the daemon grew by ${peakKb - before} kB`);
    deaf.stdin.end();
  },
);
