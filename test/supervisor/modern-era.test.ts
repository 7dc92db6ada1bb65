// MCP 2026-07-28 beside 2025-11-25 on one /mcp: the v2 SDK's client and the 1.x SDK's at once, and
// every refusal of the new era with the code and HTTP status the spec gives it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { MODERN_VERSION, modernMeta, modernRequest, modernResult, TASKS_EXTENSION } from '../helpers/modern-client.js';
import { MCP_HEADERS } from '../helpers/raw-mcp.js';

test('the v2 SDK client pinned to 2026-07-28 lists the tools and runs commands while a 1.x client does the same in the same daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const modern = new Client(
    { name: 'hive-bash-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN_VERSION } } },
  );
  await modern.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
  t.after(() => modern.close().catch(() => {}));
  const legacy = await connectClient(t, daemon.url);

  const listed = await modern.listTools();
  assert.deepEqual(
    listed.tools.map((tool) => tool.name),
    ['run', 'status', 'output', 'kill', 'list', 'input'],
  );
  const both = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      i % 2 === 0
        ? modern
            .callTool({ name: 'run', arguments: { command: `echo modern ${i}` } })
            .then((result) => result.structuredContent as any)
        : legacy.ok('run', { command: `echo legacy ${i}` }),
    ),
  );
  assert.deepEqual(
    both.map((view) => view.stdout_tail),
    ['modern 0\n', 'legacy 1\n', 'modern 2\n', 'legacy 3\n', 'modern 4\n', 'legacy 5\n'],
  );
  const status = await modern.callTool({ name: 'status', arguments: { id: both[1].id } });
  assert.equal(
    (status.structuredContent as any).stdout_tail,
    'legacy 1\n',
    'a task started in one era is read in the other',
  );
  const health = (await (await fetch(new URL('/healthz', daemon.url))).json()) as { sessions: number };
  assert.equal(health.sessions, 1, 'only the 1.x client holds a session');
});

test('server/discover names 2026-07-28, the tools, the Tasks extension and the server; tools/list carries cache hints and every result its resultType', async (t) => {
  const daemon = await startTestDaemon(t);
  const discovered = await modernResult(daemon.url, 'server/discover');
  assert.deepEqual(discovered.supportedVersions, [MODERN_VERSION]);
  assert.deepEqual(discovered.capabilities, { tools: {}, extensions: { [TASKS_EXTENSION]: {} } });
  assert.equal(discovered.resultType, 'complete');
  assert.equal(discovered._meta['io.modelcontextprotocol/serverInfo'].name, 'bash');
  const listed = await modernResult(daemon.url, 'tools/list');
  assert.deepEqual([listed.resultType, listed.ttlMs, listed.cacheScope], ['complete', 3_600_000, 'private']);
  for (const tool of listed.tools)
    assert.ok(typeof tool.title === 'string' && tool.title.length > 0, `${tool.name} has a title`);
  const closed = Object.fromEntries(listed.tools.map((tool: any) => [tool.name, tool.annotations.openWorldHint]));
  assert.deepEqual(closed, { run: true, status: false, output: false, kill: false, list: false, input: false });
  const called = await modernResult(daemon.url, 'tools/call', { name: 'run', arguments: { command: 'echo hi' } });
  assert.deepEqual([called.resultType, called.structuredContent.stdout_tail], ['complete', 'hi\n']);
});

test('a 2026-07-28 request is refused with the spec code and HTTP status for each thing it lacks or gets wrong', async (t) => {
  const daemon = await startTestDaemon(t);
  const url = daemon.url;
  const refusedWith = async (
    answer: Promise<{ status: number; body: any }>,
    status: number,
    code: number,
    message: RegExp,
  ) => {
    const { status: got, body } = await answer;
    assert.deepEqual([got, body.error?.code], [status, code], JSON.stringify(body));
    assert.match(body.error.message, message);
    assert.equal(typeof body.id, 'number', 'the error carries the request id');
    return body.error;
  };
  await refusedWith(
    modernRequest(url, 'server/discover', {}, { meta: undefined }),
    400,
    -32602,
    /needs params\._meta with "io\.modelcontextprotocol\/protocolVersion".*got no params\._meta/,
  );
  await refusedWith(
    modernRequest(url, 'tools/list', {}, { meta: { 'io.modelcontextprotocol/protocolVersion': MODERN_VERSION } }),
    400,
    -32602,
    /clientCapabilities"\] must be an object of the client's capabilities \(\{\} for none\); got nothing/,
  );
  await refusedWith(
    modernRequest(url, 'tools/list', {}, { headers: { 'mcp-protocol-version': undefined } }),
    400,
    -32020,
    /the MCP-Protocol-Version header is required/,
  );
  await refusedWith(
    modernRequest(
      url,
      'tools/list',
      {},
      { meta: { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    ),
    400,
    -32020,
    /header "2026-07-28" does not match .*"2099-01-01"/,
  );
  await refusedWith(
    modernRequest(url, 'tools/list', {}, { headers: { 'mcp-method': 'tools/call' } }),
    400,
    -32020,
    /the Mcp-Method header "tools\/call" does not match the method "tools\/list"/,
  );
  await refusedWith(
    modernRequest(url, 'tools/list', {}, { headers: { 'mcp-method': undefined } }),
    400,
    -32020,
    /the Mcp-Method header is required/,
  );
  await refusedWith(
    modernRequest(url, 'tools/call', { name: 'list', arguments: {} }, { headers: { 'mcp-name': 'run' } }),
    400,
    -32020,
    /the Mcp-Name header "run" does not match params\.name "list"/,
  );
  await refusedWith(
    modernRequest(url, 'tools/call', { name: 'list', arguments: {} }, { headers: { 'mcp-name': undefined } }),
    400,
    -32020,
    /the Mcp-Name header is required for tools\/call/,
  );
  const listed = await modernRequest(
    url,
    'tools/call',
    { name: 'list', arguments: {} },
    { headers: { 'mcp-name': `=?base64?${Buffer.from('list').toString('base64')}?=` } },
  );
  assert.equal(listed.body.result.resultType, 'complete', 'an Mcp-Name in its base64 form is decoded first');
  const future = { ...modernMeta(), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' };
  const unsupported = await refusedWith(
    modernRequest(url, 'server/discover', {}, { meta: future, headers: { 'mcp-protocol-version': '2099-01-01' } }),
    400,
    -32022,
    /Unsupported protocol version: "2099-01-01"/,
  );
  assert.deepEqual(unsupported.data, { supported: [MODERN_VERSION], requested: '2099-01-01' });
  for (const method of ['initialize', 'ping', 'logging/setLevel', 'resources/list', 'no/such']) {
    await refusedWith(
      modernRequest(url, method),
      404,
      -32601,
      /Method not found: .* is not a method of MCP 2026-07-28 here; this server serves server\/discover, tools\/list, tools\/call, tasks\/get/,
    );
  }
  await refusedWith(
    modernRequest(url, 'tools/call', { name: 'launch', arguments: {} }),
    200,
    -32602,
    /^Invalid params: unknown tool "launch" in params\.name; this server has: run, status, output, kill, list, input$/,
  );
  await refusedWith(modernRequest(url, 'tools/call', { arguments: {} }), 200, -32602, /tools\/call needs params\.name/);
  // Bad arguments stay a tool error, with its code.
  const bad = await modernResult(url, 'tools/call', { name: 'run', arguments: { command: '' } });
  assert.equal(bad.isError, true);
  assert.equal(bad.structuredContent.error.code, 'ERR_INVALID_INPUT');
  // And the 2025 era is as it was: no session, no initialize, no service.
  const legacy = await fetch(url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(legacy.status, 400);
  assert.match(
    ((await legacy.json()) as { error: { message: string } }).error.message,
    /send an initialize request first/,
  );
});
