// The defects the fuzz found, each reproduced by a test of its own (all fixed): an id or
// progressToken past 2^53 left unanswered, an unbounded echo of unknown field names, a deeply
// nested response from the client reaching the protocol's handlers, params a known method refuses
// answered -32603 with zod's issues, a cwd the OS refuses echoed whole, and an initialize sent as
// a notification opening a session nobody was told of. The seventh, a 413 lost to a TCP reset, is
// tested in test/supervisor/http.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { errorLines, MAX_ERROR_TEXT } from './fuzz/checks.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';
import { healthSessions, openSession, rawPost } from './fuzz/http.js';

test('a request whose id or progressToken is an integer beyond 2^53 is refused with -32600, not left unanswered', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session };
  const bodies = [
    '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}',
    '{"jsonrpc":"2.0","id":1e21,"method":"ping"}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"progressToken":1e21}}}',
    `{"jsonrpc":"2.0","id":1e21,"method":"tools/list","params":{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}}`,
  ];
  for (const text of bodies) {
    const answer = await rawPost(daemon.url, headers, text, 3000).catch((error: Error) => ({
      status: 0,
      headers: {},
      text: `no answer: ${error.message}`,
    }));
    assert.equal(answer.status, 400, `${text.slice(0, 100)} -> ${answer.status} ${answer.text.slice(0, 200)}`);
    assert.equal(JSON.parse(answer.text).error.code, -32600);
  }
  assert.deepEqual(errorLines(daemon), []);
});

test('a tool error echoes unknown field names within bounds, however many or long they are', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const many = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, 1]));
  for (const args of [many, { ['x'.repeat(1_000_000)]: 1 }]) {
    const result = await tools.call('list', args);
    assert.equal(result.isError, true);
    assert.equal(result.structured.error.code, 'ERR_INVALID_INPUT');
    assert.ok(
      result.text.length <= MAX_ERROR_TEXT,
      `an answer of ${result.text.length} chars to ${Object.keys(args).length} unknown fields`,
    );
  }
});

test('a response the client sends, however deeply nested, is taken or refused without an internal error', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session };
  const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
  const bodies = [
    `{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m","data":${deep}}}`,
    `{"jsonrpc":"2.0","id":1,"result":{"a":${deep}}}`,
    `[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":"x","result":{"a":${deep}}}]`,
  ];
  for (const text of bodies) {
    const answer = await rawPost(daemon.url, headers, text, 3000);
    assert.ok(
      answer.status === 202 || answer.status === 200,
      `${text.slice(0, 80)} -> ${answer.status} ${answer.text.slice(0, 200)}`,
    );
    if (answer.status === 200)
      assert.deepEqual(
        JSON.parse(answer.text).map((response: { id: unknown }) => response.id),
        [5],
      );
  }
  assert.deepEqual(errorLines(daemon), []);
});

test('a known method whose params its schema refuses is answered -32602 Invalid params, not -32603 with zod issues', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session };
  const bodies = [
    { jsonrpc: '2.0', id: 0, method: 'tools/call' },
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: {} },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 5 } },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list', arguments: 'x' } },
    { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 1 } },
  ];
  for (const message of bodies) {
    const answer = await rawPost(daemon.url, headers, JSON.stringify(message), 3000);
    const json = JSON.parse(answer.text);
    assert.deepEqual(
      [answer.status, json.id, json.error?.code],
      [200, message.id, -32602],
      `${JSON.stringify(message)} -> ${answer.text.slice(0, 200)}`,
    );
  }
});

test('run echoes a cwd the OS refuses within bounds, however long it is', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const result = await tools.call('run', { command: 'true', cwd: 'x'.repeat(100_000) });
  assert.equal(result.isError, true);
  assert.equal(result.structured.error.code, 'ERR_INVALID_INPUT');
  assert.ok(
    result.text.length <= MAX_ERROR_TEXT,
    `an answer of ${result.text.length} chars: ${result.text.slice(0, 200)}`,
  );
});

test('an initialize without an id, sent without a session, opens no session nobody is told of', async (t) => {
  const daemon = await startTestDaemon(t);
  const { id: _, ...notification } = INITIALIZE;
  for (let i = 0; i < 3; i++) {
    const answer = await rawPost(daemon.url, MCP_HEADERS, JSON.stringify(notification), 3000);
    assert.equal(answer.headers['mcp-session-id'], undefined);
  }
  assert.equal(await healthSessions(daemon), 0, 'each answer to an initialize notification left a session open');
});
