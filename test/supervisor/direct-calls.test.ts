// A 2025 session's plain tools/call and ping are answered without the SDK's protocol layer
// (src/supervisor/mcp/direct-calls.ts); the same calls with a _meta, which still go through that
// layer, must get the same answers to the byte (their ids aside), and a call the layer would treat
// otherwise (an argument named __proto__, which its record schema drops) too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

test('plain calls of a 2025 session answer as the protocol layer does, byte for byte', async (t) => {
  const daemon = await startTestDaemon(t);
  const init = await fetch(daemon.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
  const headers = { ...MCP_HEADERS, 'mcp-session-id': init.headers.get('mcp-session-id')! };
  let id = 1;
  const post = async (body: string) => {
    const res = await fetch(daemon.url, { method: 'POST', headers, body });
    return { status: res.status, length: res.headers.get('content-length'), text: await res.text() };
  };
  /** The answer to `params` sent plain, and with an empty _meta (the protocol layer's path), each under its own id. */
  const both = async (method: string, params: string | null) => {
    const answers = [];
    for (const withMeta of [false, true]) {
      const sent = ++id;
      const shown =
        params === null ? (withMeta ? '{"_meta":{}}' : null) : withMeta ? `{"_meta":{},${params.slice(1)}` : params;
      const answer = await post(
        `{"jsonrpc":"2.0","id":${sent},"method":"${method}"${shown === null ? '' : `,"params":${shown}`}}`,
      );
      assert.equal(answer.length, String(Buffer.byteLength(answer.text)));
      answers.push({ status: answer.status, text: answer.text.replace(`"id":${sent}`, '"id":"ID"') });
    }
    assert.deepEqual(answers[0], answers[1], `${method} ${params}`);
    return JSON.parse(answers[0]!.text);
  };

  assert.deepEqual(await both('ping', null), { result: {}, jsonrpc: '2.0', id: 'ID' });
  const run = await post(
    '{"jsonrpc":"2.0","id":"r","method":"tools/call","params":{"name":"run","arguments":{"command":"echo hello","name":"same"}}}',
  );
  assert.equal(JSON.parse(run.text).result.structuredContent.stdout_tail, 'hello\n');
  // A finished task read with peek does not change: the same answer either way.
  const status = await both('tools/call', '{"name":"status","arguments":{"id":"same","peek":true}}');
  assert.equal(status.result.structuredContent.state, 'done');
  const unknown = await both('tools/call', '{"name":"status","arguments":{"id":"no-such-task"}}');
  assert.equal(unknown.result.structuredContent.error.code, 'ERR_UNKNOWN_TASK');
  const invalid = await both('tools/call', '{"name":"status","arguments":{"id":5,"bogus":true}}');
  assert.match(invalid.result.content[0].text, /"id" must be .*; got 5/);
  assert.equal(invalid.result.isError, true);
  await both('tools/call', '{"name":"list"}');
  const noTool = await both('tools/call', '{"name":"nope","arguments":{}}');
  assert.equal(noTool.error.code, -32602);
  // The layer drops an own __proto__ from arguments: the call is answered as if it had not been there.
  const proto = await both('tools/call', '{"name":"status","arguments":{"__proto__":{"x":1},"id":"same","peek":true}}');
  assert.deepEqual(proto, status);
});
