// What the tools cost a model's context, measured from a real tools/list in both eras: the six
// tools' names, descriptions and input schemas as a client sends them to a model at most 8,000
// bytes, the whole tools/list response on the wire at most 25,000 (58,791 and 16.5 KB in issue 52);
// the ranges a client that strips schema keywords (minimum, maximum) loses said in the texts; the
// output schemas without prose, still the shapes the results take (the SDK client checks each).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startTestDaemon } from '../helpers/daemon.js';
import { startHarnessPeer } from '../helpers/harness-peer.js';
import { connectClient } from '../helpers/mcp-client.js';
import { MODERN_VERSION, modernMeta } from '../helpers/modern-client.js';
import { MCP_HEADERS } from '../helpers/raw-mcp.js';
import { startPolicyDaemon } from '../policy/policy-daemon.js';

const MAX_MODEL_BYTES = 8000;
const MAX_WIRE_BYTES = 25_000;

interface Listed {
  name: string;
  description: string;
  inputSchema: { properties: Record<string, { description?: string }> };
  outputSchema: unknown;
}

/** The body of tools/list as it came over the wire (JSON, or an SSE event), and its tools. */
async function listOf(url: string, era: '2025-11-25' | '2026-07-28'): Promise<{ wire: Buffer; tools: Listed[] }> {
  let headers: Record<string, string> = { ...MCP_HEADERS, 'mcp-protocol-version': era, 'mcp-method': 'tools/list' };
  let params: Record<string, unknown> = { _meta: modernMeta() };
  if (era !== MODERN_VERSION) {
    const init = await request(url, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: era, capabilities: {}, clientInfo: { name: 'size', version: '1' } },
      }),
    });
    await init.body.text();
    headers = { ...MCP_HEADERS, 'mcp-session-id': String(init.headers['mcp-session-id']), 'mcp-protocol-version': era };
    params = {};
  }
  const listed = await request(url, {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params }),
  });
  const wire = Buffer.from(await listed.body.arrayBuffer());
  const text = wire.toString('utf8');
  const json = /^data: (.*)$/m.exec(text)?.[1] ?? text;
  return { wire, tools: (JSON.parse(json) as { result: { tools: Listed[] } }).result.tools };
}

/** The bytes a client sends a model for the tools: each one's name, description and input schema. */
const modelBytes = (tools: Listed[]) =>
  tools.reduce(
    (sum, tool) =>
      sum +
      Buffer.byteLength(
        JSON.stringify({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }),
      ),
    0,
  );

function checkListing(tools: Listed[], wire: Buffer, what: string): void {
  assert.deepEqual(tools.map((tool) => tool.name).sort(), ['input', 'kill', 'list', 'output', 'run', 'status']);
  const bytes = modelBytes(tools);
  assert.ok(bytes <= MAX_MODEL_BYTES, `${what}: the tools cost a model ${bytes} bytes, more than ${MAX_MODEL_BYTES}`);
  assert.ok(wire.length <= MAX_WIRE_BYTES, `${what}: tools/list is ${wire.length} bytes, more than ${MAX_WIRE_BYTES}`);
  for (const tool of tools) {
    if ('wait_seconds' in tool.inputSchema.properties)
      assert.match(tool.description, /wait_seconds[^.]*0-30 s/, `${what}: ${tool.name} says where wait_seconds stops`);
    for (const [name, field] of Object.entries(tool.inputSchema.properties))
      assert.ok((field.description ?? '').length > 0, `${what}: ${tool.name}.${name} has a description`);
    assert.doesNotMatch(JSON.stringify(tool.outputSchema), /"description"/, `${what}: ${tool.name}'s output schema`);
  }
}

test('the tools cost a model at most 8,000 bytes and tools/list at most 25,000, in both eras', async (t) => {
  const peer = await startHarnessPeer(t);
  const daemons = [
    { what: 'no policy, no harness', daemon: await startTestDaemon(t) },
    { what: 'a policy, no harness', daemon: await startPolicyDaemon(t) },
    { what: 'a policy and a harness', daemon: await startPolicyDaemon(t, { args: ['--agent-socket', peer.path] }) },
  ];
  for (const { what, daemon } of daemons) {
    const eras = await Promise.all([listOf(daemon.url, '2025-11-25'), listOf(daemon.url, MODERN_VERSION)]);
    for (const { wire, tools } of eras) checkListing(tools, wire, what);
    // A 2025-11-25 session marks run as a tool an MCP task may hold, and no other.
    const marked = eras[0].tools.map(({ execution, ...tool }: Listed & { execution?: unknown }) => {
      assert.deepEqual(execution, tool.name === 'run' ? { taskSupport: 'optional' } : undefined, tool.name);
      return tool;
    });
    assert.deepEqual(marked, eras[1].tools, `${what}: both eras list the same tools`);
    const texts = eras[0].tools.map((tool) => tool.description).join('\n');
    if (what === 'no policy, no harness')
      assert.doesNotMatch(texts, /approv/, 'without a policy nothing waits for approval');
  }
});

test('the lean output schemas still take every result: the SDK client checks each one', async (t) => {
  const daemon = await startTestDaemon(t);
  const client = await connectClient(t, daemon.url); // validates structured content against outputSchema
  const ran = await client.ok('run', { command: 'echo hi; echo oops >&2; exit 3', verbose: false });
  assert.deepEqual([ran.state, ran.exit_code], ['done', 3]);
  await client.ok('run', { command: 'sleep 30', name: 'sleeper', wait_seconds: 0 });
  await client.ok('status', { id: 'sleeper' });
  await client.ok('status', { ids: [ran.id, 'sleeper'] });
  await client.ok('status', { id: ran.id, wait_for: 'hi', wait_seconds: 1 });
  await client.ok('output', { id: ran.id, grep: 'hi' });
  await client.ok('list', { ports: true });
  await client.ok('kill', { id: 'sleeper' });
  await client.error('status', { id: 'no-such-task' });
});
