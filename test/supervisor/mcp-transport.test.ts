// The streamable HTTP transport as a client other than the SDK's sees it: raw requests, checked
// against what the MCP specification asks of a server in JSON-response mode.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/processes.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

async function post(url: string, body: unknown, headers: Record<string, string> = MCP_HEADERS) {
  const res = await fetch(url, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : null };
}

test('a session: initialize, notifications, single and batched requests, GET without text/event-stream refused, DELETE ends it', async (t) => {
  const daemon = await startTestDaemon(t);
  const init = await post(daemon.url, INITIALIZE);
  assert.equal(init.status, 200);
  assert.equal(init.headers.get('content-type'), 'application/json');
  const session = init.headers.get('mcp-session-id')!;
  assert.match(session, /^[0-9a-f-]{36}$/);
  assert.equal(init.json.id, 1);
  assert.equal(init.json.result.serverInfo.name, 'bash');
  assert.equal(init.json.result.protocolVersion, '2025-06-18');
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };

  const notified = await post(daemon.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  assert.deepEqual([notified.status, notified.text], [202, '']);

  const listed = await post(daemon.url, { jsonrpc: '2.0', id: 'list-1', method: 'tools/list' }, headers);
  assert.equal(listed.status, 200);
  assert.equal(listed.headers.get('mcp-session-id'), session);
  assert.equal(listed.json.id, 'list-1');
  assert.deepEqual(
    listed.json.result.tools.map((tool: { name: string }) => tool.name),
    ['run', 'status', 'output', 'kill', 'list', 'input'],
  );

  const batch = await post(
    daemon.url,
    [
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'run', arguments: { command: 'echo batched' } } },
      { jsonrpc: '2.0', id: 8, method: 'tools/list' },
    ],
    headers,
  );
  assert.equal(batch.status, 200);
  assert.deepEqual(
    batch.json.map((answer: { id: number }) => answer.id),
    [7, 8],
  );
  assert.equal(batch.json[0].result.structuredContent.stdout_tail, 'batched\n');

  const unknownMethod = await post(daemon.url, { jsonrpc: '2.0', id: 9, method: 'no/such/method' }, headers);
  assert.equal(unknownMethod.status, 200);
  assert.equal(unknownMethod.json.error.code, -32601);

  const get = await fetch(daemon.url, { headers: { accept: 'application/json', 'mcp-session-id': session } });
  assert.equal(get.status, 406);
  assert.match(
    ((await get.json()) as { error: { message: string } }).error.message,
    /^Not Acceptable: Client must accept text\/event-stream$/,
  );

  const again = await post(daemon.url, { ...INITIALIZE, id: 10 }, headers);
  assert.equal(again.status, 400);
  assert.equal(again.json.error.message, 'Invalid Request: Server already initialized');

  const ended = await fetch(daemon.url, { method: 'DELETE', headers: { 'mcp-session-id': session } });
  assert.equal(ended.status, 200);
  await ended.text();
  const gone = await post(daemon.url, { jsonrpc: '2.0', id: 11, method: 'tools/list' }, headers);
  assert.equal(gone.status, 404);
  assert.match(gone.json.error.message, /^Session not found/);
});

test('requests the specification says a server must refuse are refused, and open no session', async (t) => {
  const daemon = await startTestDaemon(t);
  const refused = [
    {
      headers: { ...MCP_HEADERS, accept: 'application/json' },
      body: INITIALIZE,
      status: 406,
      message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
    },
    {
      headers: { ...MCP_HEADERS, 'content-type': 'text/plain' },
      body: INITIALIZE,
      status: 415,
      message: 'Unsupported Media Type: Content-Type must be application/json',
    },
    {
      headers: MCP_HEADERS,
      body: { id: 1, method: 'initialize' },
      status: 400,
      message: 'Bad Request: send an initialize request first, then the Mcp-Session-Id header it returns',
    },
    {
      headers: MCP_HEADERS,
      body: [INITIALIZE, { ...INITIALIZE, id: 2 }],
      status: 400,
      message: 'Bad Request: send an initialize request first, then the Mcp-Session-Id header it returns',
    },
  ];
  for (const { headers, body, status, message } of refused) {
    const answer = await post(daemon.url, body, headers);
    assert.equal(answer.status, status, JSON.stringify(body));
    assert.equal(answer.json.error.message, message);
    assert.equal(answer.headers.get('mcp-session-id'), null);
  }
  const health = (await (await fetch(new URL('/healthz', daemon.url))).json()) as { sessions: number };
  assert.equal(health.sessions, 0, 'no refused initialize left a session');

  const session = (await post(daemon.url, INITIALIZE)).headers.get('mcp-session-id')!;
  const unsupported = await post(
    daemon.url,
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' },
  );
  assert.equal(unsupported.status, 400);
  assert.match(
    unsupported.json.error.message,
    /^Bad Request: Unsupported protocol version: 1999-01-01 \(supported versions: .*2025-06-18/,
  );
  const malformed = await post(
    daemon.url,
    { jsonrpc: '1.0', id: 3, method: 'tools/list' },
    { ...MCP_HEADERS, 'mcp-session-id': session },
  );
  assert.deepEqual(
    [malformed.status, malformed.json.id, malformed.json.error.code, malformed.json.error.message],
    [400, 3, -32600, 'Invalid Request: "jsonrpc" must be "2.0"'],
  );
});

test('every malformed message is answered, alone or in a batch beside a valid one', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = (await post(daemon.url, INITIALIZE)).headers.get('mcp-session-id')!;
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  const cases: Array<[unknown, unknown, string]> = [
    [{ jsonrpc: '2.0', id: 4, method: 'tools/list', params: 'all' }, 4, 'Invalid Request: "params" must be an object'],
    [{ jsonrpc: '2.0', id: 4, method: 'tools/list', params: [1] }, 4, 'Invalid Request: "params" must be an object'],
    [{ jsonrpc: '2.0', id: 1.5, method: 'tools/list' }, null, 'Invalid Request: "id" must be a string or an integer'],
    [
      { jsonrpc: '2.0', id: { n: 1 }, method: 'tools/list' },
      null,
      'Invalid Request: "id" must be a string or an integer',
    ],
    [
      { jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: { progressToken: true } } },
      5,
      'Invalid Request: "params._meta.progressToken" must be a string or an integer',
    ],
    [
      { jsonrpc: '2.0', id: 6, method: 'tools/list', extra: 1 },
      6,
      'Invalid Request: unknown member "extra"; a message has jsonrpc, id, method, params',
    ],
    [
      { jsonrpc: '2.0', method: 'notifications/initialized', params: 7 },
      null,
      'Invalid Request: "params" must be an object',
    ],
    [
      { jsonrpc: '2.0', id: 8 },
      8,
      'Invalid Request: a message needs "method" (a request or notification), "result" or "error"',
    ],
    [42, null, 'Invalid Request: a message must be a JSON object'],
  ];
  for (const [message, id, text] of cases) {
    const answer = await post(daemon.url, message, headers);
    assert.deepEqual(
      [answer.status, answer.json.id, answer.json.error.code, answer.json.error.message],
      [400, id, -32600, text],
      JSON.stringify(message),
    );
  }
  const batch = await post(
    daemon.url,
    [
      { jsonrpc: '2.0', id: 9, method: 'tools/list' },
      { jsonrpc: '2.0', id: 10, method: 'tools/list', params: 'x' },
    ],
    headers,
  );
  assert.equal(batch.status, 200);
  assert.deepEqual(
    batch.json.map((answer: any) => [answer.id, answer.error?.code ?? 'ok']),
    [
      [9, 'ok'],
      [10, -32600],
    ],
    'both members of the batch are answered',
  );
  const notifications = await post(
    daemon.url,
    [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', method: 7 },
    ],
    headers,
  );
  assert.deepEqual(
    [notifications.status, notifications.json.map((answer: any) => answer.error.message)],
    [200, ['Invalid Request: "method" must be a string']],
  );
  const bad = await post(
    daemon.url,
    { jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'status', arguments: 'x' } },
    headers,
  );
  assert.equal(bad.json.id, 11, 'a well-formed request with bad arguments gets an answer');
  assert.ok(bad.json.error || bad.json.result?.isError, JSON.stringify(bad.json));
  const fine = await post(daemon.url, { jsonrpc: '2.0', id: 12, method: 'tools/list' }, headers);
  assert.equal(fine.json.result.tools.length, 6, 'the session still serves');
});

test('a request the client cancels or walks away from holds nothing: its id is free again and the session is swept', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--session-idle-seconds', '1'] });
  const session = (await post(daemon.url, INITIALIZE)).headers.get('mcp-session-id')!;
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  const slowCall = (id: number) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'status', arguments: { id: 'waited-on', wait_seconds: 20 } },
  });
  await post(
    daemon.url,
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'run', arguments: { command: 'sleep 30', name: 'waited-on', wait_seconds: 0 } },
    },
    headers,
  );

  // An id is in flight once another request of the same id is refused for it.
  const inFlight = async (id: number) =>
    (await post(daemon.url, { jsonrpc: '2.0', id, method: 'tools/list' }, headers)).status === 400;

  const waiting = post(daemon.url, slowCall(5), headers);
  assert.ok(await waitFor(() => inFlight(5), 10_000), 'the slow call is in flight');
  const cancel = await post(
    daemon.url,
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'changed my mind' } },
    headers,
  );
  assert.equal(cancel.status, 202);
  const cancelled = await waiting;
  // A status call that ran out its 20 s wait would have been answered 200 with its result.
  assert.deepEqual([cancelled.status, cancelled.text], [202, ''], 'a cancelled request gets no response');
  assert.equal(
    (await post(daemon.url, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, headers)).status,
    200,
    'the id is free again',
  );

  const gone = new AbortController();
  const abandoned = fetch(daemon.url, {
    method: 'POST',
    headers,
    body: JSON.stringify(slowCall(6)),
    signal: gone.signal,
  }).catch(() => null);
  assert.ok(await waitFor(() => inFlight(6), 10_000), 'the abandoned call is in flight');
  gone.abort();
  await abandoned;
  assert.ok(
    await waitFor(async () => !(await inFlight(6)), 10_000),
    'the id of a request whose client went away is free again',
  );

  // Nothing holds the session busy any more: it is swept once idle.
  const swept = await waitFor(
    async () => ((await (await fetch(new URL('/healthz', daemon.url))).json()) as { sessions: number }).sessions === 0,
    30_000,
    100,
  );
  assert.ok(swept, 'the idle session was swept');
});
