// One of the daemon's own tasks that holds every connection the daemon allows, each with a status
// wait of 30 s in flight and sent again as soon as it is closed, cannot lock out callers outside
// the tasks: a new connection past the limit closes one of the task's with its request in flight
// (the task's, never an outside caller's), where before it was itself closed (the eighth round:
// 892 of 922 /healthz probes failed over 75 s). Nor can another user's process outside the tasks
// (the ninth round: 520 connections from 127.0.0.1, every other local client closed): the newest
// connection of the user holding the most is closed for another user's.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
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

  /** How many times the flood has told it holds every connection. */
  const full = () =>
    readFileSync(flood.stdout_path, 'utf8')
      .split('\n')
      .filter((line) => line === `holding ${LIMIT}`).length;
  // Once at first, and again after each probe: the flood takes its room back.
  let seen = 0;
  const floodHoldsAll = async () => {
    const held = await waitFor(() => full() > seen, 60_000);
    seen = full();
    return held;
  };
  const answered = await probeThroughFlood(daemon.origin, floodHoldsAll);
  const target = await modernResult(daemon.url, 'tools/call', { name: 'status', arguments: { id: 'target' } });
  assert.equal(target.structuredContent.state, 'running', 'an outside call is served');
  const counts = JSON.parse((await getAfresh(daemon.origin, '/healthz')).body).connections;
  assert.ok(counts.cut_from_tasks >= PROBES, `${counts.cut_from_tasks} of the task's connections cut`);
  assert.equal(counts.refused, 0, 'no outside connection was closed for want of room');
  report(t, { probes: PROBES, healthz_ms: answered, connections: counts });
});

/**
 * Asks /healthz PROBES times on a new connection, each once the flood holds every connection
 * (`floodHoldsAll` waits for that, false if it never comes); the times each took.
 */
async function probeThroughFlood(origin: string, floodHoldsAll: () => Promise<boolean>): Promise<number[]> {
  const answered: number[] = [];
  for (let probe = 0; probe < PROBES; probe++) {
    assert.ok(await floodHoldsAll(), `the flood holds every connection (before probe ${probe + 1})`);
    const started = Date.now();
    const health = await getAfresh(origin, '/healthz');
    answered.push(Date.now() - started);
    assert.equal(health.status, 200, health.body);
  }
  return answered;
}

/** Connections to local `port` that processes of user `uid` hold established, from the kernel's table. */
function heldBy(uid: number, port: number): number {
  const remote = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .filter((line) => {
      const fields = line.trim().split(/\s+/);
      return fields[2]?.endsWith(remote) && fields[3] === '01' && Number(fields[7]) === uid;
    }).length;
}

/** The operator's CLI, built beside the tests. */
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

/** The user nobody's ids, which the flood of another user runs as. */
const NOBODY = 65_534;

/**
 * `bash -c BASH_FLOOD bash PORT COUNT`: the flood of FLOOD_SCRIPT in bash (which any user can run,
 * where the test's Node may sit in a folder only root reads): COUNT loops that each keep a
 * connection with a `status` wait of 30 s on task `target`, and connect again when it closes.
 */
const BASH_FLOOD = `
body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"status","arguments":{"id":"target","wait_seconds":30},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
hold() {
  while :; do
    exec 3<>"/dev/tcp/127.0.0.1/$1" || continue
    printf 'POST /mcp HTTP/1.1\\r\\nHost: 127.0.0.1:%s\\r\\nContent-Type: application/json\\r\\nAccept: application/json, text/event-stream\\r\\nMCP-Protocol-Version: 2026-07-28\\r\\nMcp-Method: tools/call\\r\\nMcp-Name: status\\r\\nContent-Length: %s\\r\\n\\r\\n%s' "$1" "\${#body}" "$body" >&3
    cat <&3 >/dev/null
    exec 3<&-
  done 2>/dev/null
}
for i in $(seq "$2"); do hold "$1" & done
wait
`;

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
    // Run by the CLI, whose connection ends with it: an idle one of the test's own would stay, as
    // a user that holds the most connections (the flood's) does not close another user's idle one.
    const started = spawnSync(
      process.execPath,
      [CLI, '--url', daemon.url, 'run', '--name', 'target', '-d', '--', 'sleep', '600'],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(started.status, 0, started.stderr);
    const flood = spawn('bash', ['-c', BASH_FLOOD, 'bash', new URL(daemon.url).port, String(LIMIT)], {
      uid: NOBODY,
      gid: NOBODY,
      detached: true, // a group of its own: its loops and their cats go with it
      stdio: 'ignore',
    });
    t.after(async () => {
      const exited = flood.exitCode === null && flood.signalCode === null ? once(flood, 'exit') : null;
      process.kill(-flood.pid!, 'SIGKILL');
      await exited;
      // Its loops and their cats are gone too before the test ends.
      await waitFor(() => spawnSync('pgrep', ['-g', String(flood.pid)]).status !== 0, 10_000);
    });
    // The kernel counts the flood's connections (all there are once it holds every one).
    const port = Number(new URL(daemon.url).port);
    const floodHoldsAll = () => waitFor(() => heldBy(NOBODY, port) === LIMIT, 60_000);
    const answered = await probeThroughFlood(daemon.origin, floodHoldsAll);
    const counts = JSON.parse((await getAfresh(daemon.origin, '/healthz')).body).connections;
    // Room came from the flood's connections: those not yet sent whole, or its newest in flight (cut_from_users).
    assert.equal(counts.cut_from_tasks, 0, 'no task holds a connection');
    report(t, { probes: PROBES, healthz_ms: answered, connections: counts });
  },
);
