// mcp/json-rpc.ts's checkMessage takes and refuses what MCP's JSON-RPC schemas do, as the SDK the
// tests pin (package.json names one exact version) implements them: a message the daemon takes is
// one that SDK's clients can send and read. These tests fail if an upgrade of the SDK moves away.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { checkMessage } from '../../src/supervisor/mcp/json-rpc.js';

const STATELESS_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** One of each shape the daemon meets: requests, notifications, results and errors, right and wrong. */
const TABLE: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'ping' },
  { jsonrpc: '2.0', id: 'a', method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 0, method: 'tools/call', params: { name: 'run', arguments: { command: 'true' } } },
  { jsonrpc: '2.0', id: 1, method: 'x', params: [] },
  { jsonrpc: '2.0', id: 1, method: 'x', params: null },
  { jsonrpc: '2.0', id: 1.5, method: 'x' },
  { jsonrpc: '2.0', id: null, method: 'x' },
  { jsonrpc: '2.0', id: 2 ** 53, method: 'x' },
  { jsonrpc: '2.0', id: -(2 ** 53), method: 'x' },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
  { jsonrpc: '2.0', method: 'notifications/x', extra: 1 },
  { jsonrpc: '2.0', id: 1, method: 'x', extra: 1 },
  { jsonrpc: '1.0', id: 1, method: 'x' },
  { id: 1, method: 'x' },
  { jsonrpc: '2.0', id: 1, result: {} },
  { jsonrpc: '2.0', id: 1, result: [] },
  { jsonrpc: '2.0', id: 1, result: { _meta: 5 } },
  { jsonrpc: '2.0', id: 1, result: { _meta: { progressToken: 1.5 } } },
  { jsonrpc: '2.0', result: {} },
  { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' } },
  { jsonrpc: '2.0', error: { code: -32600, message: 'm' } },
  { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } },
  { jsonrpc: '2.0', id: 1, error: { code: 1 } },
  { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm', data: [1] } },
  { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { progressToken: 1.5 } } },
  { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { progressToken: 't' } } },
  { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 1 } } } },
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'x',
    params: { _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } } },
  },
  { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: [] } },
  { jsonrpc: '2.0', id: 1, method: 5 },
  { jsonrpc: '2.0', id: 1 },
  { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: STATELESS_META } },
  { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { taskId: 'build', _meta: STATELESS_META } },
  [],
  5,
  null,
  'x',
];

const agrees = (message: unknown) =>
  (checkMessage(message) === null) === JSONRPCMessageSchema.safeParse(message).success;

test('checkMessage takes and refuses exactly what the pinned SDK takes and refuses, for a message of every shape', () => {
  const disagreements = TABLE.filter((message) => !agrees(message)).map((message) => JSON.stringify(message));
  assert.deepEqual(disagreements, []);
});

test('checkMessage and the pinned SDK agree on generated messages with any id, method, params, result or error', () => {
  const value = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(1.5, 2 ** 53, -1, 0, '', null));
  const meta = fc.oneof(
    value,
    fc.record(
      { progressToken: value, 'io.modelcontextprotocol/related-task': fc.oneof(value, fc.record({ taskId: value })) },
      { requiredKeys: [] },
    ),
  );
  const member = fc.record(
    {
      jsonrpc: fc.oneof(fc.constant('2.0'), value),
      id: value,
      method: fc.oneof(fc.constantFrom('ping', 'tools/call', 'notifications/cancelled'), value),
      params: fc.oneof(fc.record({ _meta: meta, name: value }, { requiredKeys: [] }), value),
      result: fc.oneof(fc.record({ _meta: meta }, { requiredKeys: [] }), value),
      error: fc.oneof(fc.record({ code: value, message: value, data: value }, { requiredKeys: [] }), value),
      extra: value,
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(member, (message) => assert.ok(agrees(message), JSON.stringify(message))),
    { numRuns: 2000 },
  );
});
