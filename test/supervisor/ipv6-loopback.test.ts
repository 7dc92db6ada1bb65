// A daemon on 127.0.0.1 holds [::1] on its port too, and serves it: a task cannot listen there to
// take the calls (and token) of a client that resolves localhost to ::1; before, one could (the
// eighth hostile round). Callers over ::1 are looked up as over 127.0.0.1: under --tasks-may-call
// off a task's request there is refused, an outside one served.
import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { test } from 'node:test';
import { getAfresh } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { modernRequest } from '../helpers/modern-client.js';

const hasIpv6Loopback = Object.values(networkInterfaces())
  .flat()
  .some((entry) => entry?.address === '::1');

/** A task's node script: listens on [::1]:PORT, or POSTs a 2026-07-28 `list` to http://[::1]:PORT/mcp; prints what came of it. */
const TRY_SCRIPT = String.raw`
const [what, port] = process.argv.slice(1);
if (what === 'listen') {
  require('net').createServer().listen(Number(port), '::1')
    .on('listening', () => { console.log('listening'); process.exit(0); })
    .on('error', (error) => { console.log(error.code); process.exit(0); });
} else {
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  fetch('http://[::1]:' + port + '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'list' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list', arguments: {}, _meta: meta } }),
  }).then((res) => console.log('status ' + res.status), (error) => console.log('failed ' + error.cause?.code));
}`;

test(
  'a daemon on 127.0.0.1 holds [::1] on its port: a task cannot listen there, and calls over ::1 are served and looked up',
  { skip: hasIpv6Loopback ? false : 'no ::1 on this machine (IPv6 off): no one can listen there' },
  async (t) => {
    const daemon = await startTestDaemon(t, { args: ['--tasks-may-call', 'off'] });
    const { port } = new URL(daemon.url);
    const health = await getAfresh(`http://[::1]:${port}`, '/healthz');
    assert.equal(health.status, 200, health.body);
    assert.equal(JSON.parse(health.body).ok, true);

    const tools = await connectClient(t, daemon.url);
    const task = (what: string) =>
      tools.ok('run', {
        command: `'${process.execPath}' -e "$SCRIPT" ${what} ${port}`,
        env: { SCRIPT: TRY_SCRIPT },
        wait_seconds: 30,
      });
    assert.equal((await task('listen')).stdout_tail, 'EADDRINUSE\n', "the daemon's port on ::1 is taken");
    assert.equal((await task('call')).stdout_tail, 'status 403\n', "a task's call over ::1 is a task's");

    const url = `http://[::1]:${port}/mcp`;
    const outside = await modernRequest(url, 'tools/call', { name: 'list', arguments: {} });
    assert.equal(outside.status, 200, JSON.stringify(outside.body));
    assert.equal(outside.body.result.structuredContent.tasks.length, 2, 'the two tasks, listed over ::1');
  },
);
