// What the tools and the server's instructions say about a task's end is true for the daemon as
// configured and for the client that asks: with a harness on --agent-socket the end comes as a todo;
// a 2026-07-28 client that declares the Tasks extension holds run as a task and reports its end; a
// 2025 session of Claude Code (or of a client declaring the channel) hears it pushed; to the rest
// nothing announces it, and the agent is told how to wait (never "do not poll"). Read in both eras:
// the 2025 initialize result and tools/list of its session, and 2026-07-28's server/discover and tools/list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startTestDaemon } from '../helpers/daemon.js';
import { startHarnessPeer } from '../helpers/harness-peer.js';
import { modernResult } from '../helpers/modern-client.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

interface Advice {
  instructions: string;
  descriptions: Record<string, string>;
}

/** The instructions and tool descriptions of the 2025 era (initialize with `params`, then tools/list in its session). */
async function legacyAdvice(url: string, params: Record<string, unknown> = INITIALIZE.params): Promise<Advice> {
  const body = JSON.stringify({ ...INITIALIZE, params });
  const init = await request(url, { method: 'POST', headers: MCP_HEADERS, body });
  const { result } = (await init.body.json()) as { result: { instructions: string } };
  const session = {
    ...MCP_HEADERS,
    'mcp-session-id': String(init.headers['mcp-session-id']),
    'mcp-protocol-version': '2025-06-18',
  };
  await (
    await request(url, {
      method: 'POST',
      headers: session,
      body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    })
  ).body.text();
  const listed = await request(url, {
    method: 'POST',
    headers: session,
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  const { result: tools } = (await listed.body.json()) as {
    result: { tools: Array<{ name: string; description: string }> };
  };
  return { instructions: result.instructions, descriptions: descriptionsOf(tools.tools) };
}

/** The same of the 2026-07-28 era (server/discover and tools/list), from a client that declares the Tasks extension if `tasks`. */
async function modernAdvice(url: string, tasks = false): Promise<Advice> {
  const discovered = await modernResult(url, 'server/discover', {}, { tasks });
  const listed = await modernResult(url, 'tools/list', {}, { tasks });
  return { instructions: discovered.instructions, descriptions: descriptionsOf(listed.tools) };
}

const descriptionsOf = (tools: Array<{ name: string; description: string }>) =>
  Object.fromEntries(tools.map((tool) => [tool.name, tool.description]));

/** Every text an agent reads about how tasks end. */
const allText = (advice: Advice) => [advice.instructions, ...Object.values(advice.descriptions)].join('\n');

test('without a harness the tools say how to wait for a task and never promise a notification', async (t) => {
  const daemon = await startTestDaemon(t);
  for (const advice of [await legacyAdvice(daemon.url), await modernAdvice(daemon.url)]) {
    const text = allText(advice);
    assert.doesNotMatch(text, /notif|todo|do not poll|no need to poll|not to poll/i);
    assert.match(
      advice.instructions,
      /nothing announces its end: to wait for it, call status with its id and wait_seconds/,
    );
    assert.match(
      advice.descriptions.run!,
      /status with wait_seconds \(up to 30\) waits for the end and returns as soon as it comes/,
    );
    assert.match(advice.descriptions.status!, /Nothing announces the end of a task: to wait for it, give wait_seconds/);
    assert.match(advice.descriptions.kill!, /status with wait_seconds waits for the end/);
  }
});

test("with a harness on --agent-socket the tools say a task's end comes as a todo", async (t) => {
  const peer = await startHarnessPeer(t);
  const daemon = await startTestDaemon(t, { args: ['--agent-socket', peer.path] });
  for (const advice of [await legacyAdvice(daemon.url), await modernAdvice(daemon.url)]) {
    assert.match(advice.instructions, /its end reaches you as a todo, so there is no need to poll/);
    assert.match(advice.descriptions.run!, /their end reaches you as a todo, so do not poll with status/);
    assert.match(advice.descriptions.status!, /A task's end reaches you as a todo/);
    assert.match(advice.descriptions.kill!, /the end reaches you as a todo/);
    assert.doesNotMatch(allText(advice), /notif|nothing announces/i);
  }
});

test('a 2026-07-28 client that declares the Tasks extension is told its client reports the end; one that does not, how to wait', async (t) => {
  const daemon = await startTestDaemon(t);
  const held = await modernAdvice(daemon.url, true);
  assert.match(
    held.instructions,
    /your client holds it as a task and tells you when it ends, so there is no need to poll/,
  );
  assert.match(held.descriptions.run!, /keep running as a task of your client, which tells you when it ends/);
  assert.match(held.descriptions.status!, /Your client tells you when a task it holds ends/);
  assert.match(held.descriptions.kill!, /your client tells you the end of a task it holds/);
  assert.doesNotMatch(allText(held), /nothing announces|todo|channel/i);
  const plain = await modernAdvice(daemon.url, false);
  assert.match(plain.instructions, /nothing announces its end: to wait for it, call status/);
  assert.doesNotMatch(allText(plain), /your client|todo|channel/i);
});

test('a 2025 session of Claude Code, or of a client that declares the channel, is told the end is pushed; others how to wait', async (t) => {
  const daemon = await startTestDaemon(t);
  const claude = {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'claude-code', version: '2.1.332' },
  };
  const declaring = {
    protocolVersion: '2025-11-25',
    capabilities: { experimental: { 'claude/channel': {} } },
    clientInfo: { name: 'other', version: '1' },
  };
  for (const params of [claude, declaring]) {
    const pushed = await legacyAdvice(daemon.url, params);
    assert.match(
      pushed.instructions,
      /the daemon pushes its end to your client \(Claude Code shows it as a <channel> event when started with channels on\); if nothing reaches you, to wait for it, call status/,
    );
    assert.match(pushed.descriptions.run!, /their end is pushed to your client; without it, status with wait_seconds/);
    assert.match(
      pushed.descriptions.status!,
      /A task's end is pushed to your client; if nothing reaches you, give wait_seconds/,
    );
    assert.match(
      pushed.descriptions.kill!,
      /the end is pushed to your client, or status with wait_seconds waits for it/,
    );
    assert.doesNotMatch(allText(pushed), /todo|your client holds/i);
  }
  const plain = await legacyAdvice(daemon.url);
  assert.match(plain.instructions, /nothing announces its end/);
  assert.doesNotMatch(allText(plain), /pushed|channel|your client/i);
});

test('a harness on --agent-socket wins: every client is told of the todo', async (t) => {
  const peer = await startHarnessPeer(t);
  const daemon = await startTestDaemon(t, { args: ['--agent-socket', peer.path] });
  const claude = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'claude-code', version: '2' } };
  for (const advice of [await modernAdvice(daemon.url, true), await legacyAdvice(daemon.url, claude)])
    assert.match(advice.instructions, /its end reaches you as a todo, so there is no need to poll/);
});
