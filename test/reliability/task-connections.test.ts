// One of the daemon's own tasks that holds every connection the daemon allows, each with a status
// wait of 30 s in flight and sent again as soon as it is closed, cannot lock out callers outside
// the tasks: a new connection past the limit closes one of the task's with its request in flight
// (the task's, never an outside caller's), where before it was itself closed (the eighth round:
// 892 of 922 /healthz probes failed over 75 s). Nor can another user's process outside the tasks
// (the ninth round: 520 connections from 127.0.0.1, every other local client closed): the newest
// connection of the user holding the most is closed for another user's.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { getAfresh, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { modernResult } from '../helpers/modern-client.js';
import { waitFor } from '../helpers/processes.js';

const LIMIT = 8;
const PROBES = 5;

/**
 * `node flood.mjs PORT TARGET COUNT`: keeps COUNT connections to the daemon, each with a
 * 2026-07-28 `status` wait of 30 s on task TARGET, opening another when one closes; prints
 * `holding N` whenever the number of connections that sent their request and are open changes.
 */
const FLOOD_SCRIPT = `
import { connect } from 'node:net';
const [port, target, count] = process.argv.slice(2);
const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
  params: { name: 'status', arguments: { id: target, wait_seconds: 30 }, _meta: meta } });
const request = ['POST /mcp HTTP/1.1', 'Host: 127.0.0.1:' + port, 'Content-Type: application/json',
  'Accept: application/json, text/event-stream', 'MCP-Protocol-Version: 2026-07-28', 'Mcp-Method: tools/call',
  'Mcp-Name: status', 'Content-Length: ' + Buffer.byteLength(body), '', body].join('\\r\\n');
let holding = 0;
let told = -1;
const tell = () => { if (holding !== told) console.log('holding ' + (told = holding)); };
function hold() {
  const socket = connect(Number(port), '127.0.0.1');
  let sent = false;
  socket.on('connect', () => { socket.write(request); sent = true; holding++; tell(); });
  socket.on('data', () => {});
  socket.on('error', () => {});
  socket.on('close', () => { if (sent) holding--; tell(); setImmediate(hold); });
}
for (let i = 0; i < Number(count); i++) hold();
`;

test(`a task holding all ${LIMIT} connections with status waits in flight: /healthz and outside calls are served, the task's connections cut`, async (t) => {
  const daemon = await startTestDaemon(t, {
    env: {
      HIVE_BASH_MAX_CONNECTIONS: String(LIMIT),
      HIVE_BASH_MAX_CONNECTIONS_PER_PEER: String(LIMIT),
    },
  });
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-flood-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'flood.mjs'), FLOOD_SCRIPT);
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: 'sleep 600', name: 'target' });
  const { port } = new URL(daemon.url);
  const flood = await tools.ok('run', {
    command: `'${process.execPath}' '${join(dir, 'flood.mjs')}' ${port} target ${LIMIT}`,
    name: 'flood',
  });
  await tools.client.close();

  const answered = await probeThroughFlood(daemon.origin, flood.stdout_path);
  const target = await modernResult(daemon.url, 'tools/call', { name: 'status', arguments: { id: 'target' } });
  assert.equal(target.structuredContent.state, 'running', 'an outside call is served');
  const counts = JSON.parse((await getAfresh(daemon.origin, '/healthz')).body).connections;
  assert.ok(counts.cut_from_tasks >= PROBES, `${counts.cut_from_tasks} of the task's connections cut`);
  assert.equal(counts.refused, 0, 'no outside connection was closed for want of room');
  report(t, { probes: PROBES, healthz_ms: answered, connections: counts });
});

/**
 * Asks /healthz PROBES times on a new connection while the flood whose output is `floodOutput`
 * holds every connection, waiting for it to hold them all again after each; the times it took.
 */
async function probeThroughFlood(origin: string, floodOutput: string): Promise<number[]> {
  /** How many times the flood has told it holds every connection. */
  const full = () =>
    readFileSync(floodOutput, 'utf8')
      .split('\n')
      .filter((line) => line === `holding ${LIMIT}`).length;
  assert.ok(await waitFor(() => full() > 0, 60_000), 'the flood holds every connection');
  const answered: number[] = [];
  for (let probe = 0; probe < PROBES; probe++) {
    const before = full();
    const started = Date.now();
    const health = await getAfresh(origin, '/healthz');
    answered.push(Date.now() - started);
    assert.equal(health.status, 200, health.body);
    // The flood takes its room back before the next probe.
    assert.ok(await waitFor(() => full() > before, 60_000), 'the flood holds every connection again');
  }
  return answered;
}

/** The user nobody's ids, which the flood of another user runs as. */
const NOBODY = 65_534;

test(
  `another user's process holding all ${LIMIT} connections with status waits in flight: /healthz is served, the flood's connections closed for it`,
  { skip: process.getuid?.() !== 0 && 'needs root, to run a process as another user' },
  async (t) => {
    const daemon = await startTestDaemon(t, {
      env: {
        HIVE_BASH_MAX_CONNECTIONS: String(LIMIT),
        HIVE_BASH_MAX_CONNECTIONS_PER_PEER: String(LIMIT),
      },
    });
    const dir = mkdtempSync(join(tmpdir(), 'hive-bash-flood-'));
    chmodSync(dir, 0o755); // the flood, as nobody, reads its script and writes its output here
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'flood.mjs'), FLOOD_SCRIPT);
    const tools = await connectClient(t, daemon.url);
    await tools.ok('run', { command: 'sleep 600', name: 'target' });
    await tools.client.close();
    const output = join(dir, 'flood.out');
    const out = openSync(output, 'w');
    const flood = spawn(process.execPath, [join(dir, 'flood.mjs'), new URL(daemon.url).port, 'target', String(LIMIT)], {
      uid: NOBODY,
      gid: NOBODY,
      stdio: ['ignore', out, 'ignore'],
    });
    closeSync(out);
    t.after(async () => {
      flood.kill('SIGKILL');
      if (flood.exitCode === null && flood.signalCode === null) await once(flood, 'exit');
    });
    const answered = await probeThroughFlood(daemon.origin, output);
    const counts = JSON.parse((await getAfresh(daemon.origin, '/healthz')).body).connections;
    // Room came from the flood's connections: those not yet sent whole, or its newest in flight (cut_from_users).
    assert.equal(counts.cut_from_tasks, 0, 'no task holds a connection');
    report(t, { probes: PROBES, healthz_ms: answered, connections: counts });
  },
);
