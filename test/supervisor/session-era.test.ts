// A 2025-era session as the daemon answers it without the SDK's server (src/supervisor/mcp/
// session-methods.ts): initialize's negotiation and result, ping, unknown methods, initialize's
// params checked; and tools/call, which both eras answer through one function, the same in each.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { modernResult } from '../helpers/modern-client.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

async function post(url: string, body: unknown, headers: Record<string, string> = MCP_HEADERS) {
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, session: res.headers.get('mcp-session-id'), json: text ? JSON.parse(text) : null };
}

async function sessions(url: string): Promise<number> {
  return ((await (await fetch(new URL('/healthz', url))).json()) as { sessions: number }).sessions;
}

test('initialize answers the version asked for when served, else the newest, with capabilities, serverInfo and instructions', async (t) => {
  const daemon = await startTestDaemon(t);
  const asked = await post(daemon.url, {
    ...INITIALIZE,
    params: { ...INITIALIZE.params, protocolVersion: '2024-11-05' },
  });
  assert.equal(asked.status, 200);
  assert.equal(asked.json.result.protocolVersion, '2024-11-05');
  assert.deepEqual(asked.json.result.capabilities, { tools: {}, experimental: { 'claude/channel': {} } });
  assert.equal(asked.json.result.serverInfo.name, 'bash');
  assert.match(asked.json.result.instructions, /run/);
  const future = await post(daemon.url, {
    ...INITIALIZE,
    params: { ...INITIALIZE.params, protocolVersion: '2030-01-01' },
  });
  assert.equal(future.json.result.protocolVersion, '2025-11-25');
  assert.equal(await sessions(daemon.url), 2);
});

test('an initialize with unfit params is refused with INVALID_PARAMS, naming the member, and opens no session', async (t) => {
  const daemon = await startTestDaemon(t);
  const cases: Array<[unknown, RegExp]> = [
    [undefined, /^Invalid params: initialize needs params/],
    [{ capabilities: {}, clientInfo: { name: 'x', version: '1' } }, /params\.protocolVersion must be a version string/],
    [
      { protocolVersion: '2025-06-18', capabilities: 1, clientInfo: { name: 'x', version: '1' } },
      /params\.capabilities/,
    ],
    [{ protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x' } }, /params\.clientInfo must be/],
  ];
  for (const [params, message] of cases) {
    const answer = await post(daemon.url, { jsonrpc: '2.0', id: 1, method: 'initialize', params });
    assert.deepEqual([answer.status, answer.json.id, answer.json.error.code], [200, 1, -32602], JSON.stringify(params));
    assert.match(answer.json.error.message, message);
    assert.equal(answer.session, null);
  }
  assert.equal(await sessions(daemon.url), 0);
});

test('ping, an unknown method and a call with a task member in a session', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = (await post(daemon.url, INITIALIZE)).session!;
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  assert.deepEqual((await post(daemon.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, headers)).json, {
    jsonrpc: '2.0',
    id: 2,
    result: {},
  });
  const unknown = await post(daemon.url, { jsonrpc: '2.0', id: 3, method: 'prompts/list' }, headers);
  assert.equal(unknown.status, 200);
  assert.equal(unknown.json.error.code, -32601);
  assert.equal(
    unknown.json.error.message,
    'Method not found: "prompts/list"; a session serves initialize, ping, tools/list, tools/call',
  );
  // This era's sessions offer no MCP tasks: a call that asks for one is answered as a plain call.
  const call = { name: 'run', arguments: { command: 'echo plain' }, task: { ttl: 60_000 } };
  const plain = await post(daemon.url, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: call }, headers);
  assert.equal(plain.json.result.structuredContent.stdout_tail, 'plain\n', JSON.stringify(plain.json));
});

test('tools/call answers the same in a session and in 2026-07-28: one function serves both eras', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = (await post(daemon.url, INITIALIZE)).session!;
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  let id = 10;
  const inSession = async (name: string, args: unknown) =>
    (
      await post(
        daemon.url,
        { jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } },
        headers,
      )
    ).json.result;
  const stateless = async (name: string, args: unknown) => {
    const { resultType, ...result } = await modernResult(daemon.url, 'tools/call', { name, arguments: args });
    assert.equal(resultType, 'complete');
    return result;
  };
  await inSession('run', { command: 'echo same', name: 'same' });
  const calls: Array<[string, unknown]> = [
    ['status', { id: 'same', peek: true }],
    ['status', { id: 'same', peek: true, verbose: true }],
    ['status', { id: 'no-such-task' }],
    ['status', { id: 5, bogus: true }],
    ['output', { id: 'same' }],
    ['kill', { id: 'no-such-task' }],
  ];
  for (const [name, args] of calls)
    assert.deepEqual(await inSession(name, args), await stateless(name, args), `${name} ${JSON.stringify(args)}`);
  const refused = await post(
    daemon.url,
    { jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'nope', arguments: {} } },
    headers,
  );
  assert.equal(refused.json.error.code, -32602);
  assert.match(
    refused.json.error.message,
    /^Invalid params: unknown tool "nope" in params\.name; this server has: run,/,
  );
});
