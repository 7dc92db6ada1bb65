// A hostile client of a 2025-era session (found by attacking the daemon's own MCP core from
// outside). Each test shows a defect, and fails until it is fixed:
// - a request id reused once its first request was cancelled gets the first request's answer
//   (the late answer of the cancelled request is matched to the new POST by id alone);
// - an MCP-Protocol-Version header that is no version at all ("bogus") sends a session's request
//   to the 2026-07-28 era, which refuses it for lacking that era's _meta, where a session refuses
//   an unknown protocol version as the session era's 400 "Unsupported protocol version";
// - run's env with an own "__proto__" member (of any value, 5 included) is taken, the member
//   silently dropped (zod's record skips the key), where every other bad env is refused;
// - a number JSON.parse makes Infinity (1e400) is echoed as "got null (number)".
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/processes.js';
import { MCP_HEADERS } from '../helpers/raw-mcp.js';
import { makeScratchDir } from '../helpers/scratch.js';
import { errorLines } from './fuzz/checks.js';
import { openSession, rawPost } from './fuzz/http.js';

const LONG_MS = 60_000;

/** A run, as request `id`, named `name`, that touches `started` and ends once `release` exists. */
function gatedRun(id: number, name: string, started: string, release: string): string {
  const command = `touch ${started}; while [ ! -e ${release} ]; do sleep 0.05; done; echo ${name}`;
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'run', arguments: { command, name, wait_seconds: 30 } },
  });
}

test('a request id reused after its request was cancelled is answered with its own result, not the cancelled one', async (t) => {
  const daemon = await startTestDaemon(t);
  const dir = makeScratchDir(t, 'reused-id');
  const headers = { ...MCP_HEADERS, 'mcp-session-id': await openSession(daemon.url) };
  const file = (name: string) => join(dir, name);

  // Request 7 runs "first", which waits for its release file; the client cancels request 7.
  const first = rawPost(daemon.url, headers, gatedRun(7, 'first', file('first.started'), file('first.go')), LONG_MS);
  await waitFor(() => existsSync(file('first.started')), LONG_MS);
  const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } };
  assert.equal((await rawPost(daemon.url, headers, JSON.stringify(cancel))).status, 202);
  assert.equal((await first).status, 202, 'the cancelled request is answered by nothing');

  // Id 7 again, for "second", still waiting when "first" ends and its handler answers late.
  const second = rawPost(
    daemon.url,
    headers,
    gatedRun(7, 'second', file('second.started'), file('second.go')),
    LONG_MS,
  );
  await waitFor(() => existsSync(file('second.started')), LONG_MS);
  writeFileSync(file('first.go'), '');
  const firstEnded = JSON.stringify({
    jsonrpc: '2.0',
    id: 8,
    method: 'tools/call',
    params: { name: 'status', arguments: { id: 'first', wait_seconds: 30 } },
  });
  const status = JSON.parse((await rawPost(daemon.url, headers, firstEnded, LONG_MS)).text);
  assert.equal(status.result.structuredContent.state, 'done', JSON.stringify(status));
  writeFileSync(file('second.go'), '');

  const answer = await second;
  const result = JSON.parse(answer.text).result;
  assert.equal(result?.structuredContent?.id, 'second', `request 7 (run "second") was answered: ${answer.text}`);
  assert.deepEqual(errorLines(daemon), []);
});

test('a session request whose MCP-Protocol-Version is no version at all is refused as an unsupported version of the session era', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  for (const version of ['bogus', 'latest']) {
    const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': version };
    const answer = await rawPost(daemon.url, headers, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    assert.equal(answer.status, 400, answer.text);
    const error = JSON.parse(answer.text).error;
    assert.match(error.message, /Unsupported protocol version/, `MCP-Protocol-Version ${version}: ${answer.text}`);
    assert.match(error.message, new RegExp(version), answer.text);
  }
});

/** A session's tools/call of `name` with `args` (a JSON text, so that it may hold __proto__ or 1e400), answered. */
async function rawCall(
  url: string,
  session: string,
  name: string,
  args: string,
): Promise<{ isError?: boolean; text: string }> {
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session };
  const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
  const answer = await rawPost(url, headers, body);
  const result = JSON.parse(answer.text).result;
  return { isError: result?.isError, text: result?.content?.[0]?.text ?? answer.text };
}

test('run refuses an env with an own __proto__ member, as it refuses every other bad env', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  for (const value of ['5', '"x"', '{"PATH":"/nowhere"}']) {
    const answer = await rawCall(daemon.url, session, 'run', `{"command":"true","env":{"__proto__":${value}}}`);
    assert.equal(answer.isError, true, `env {"__proto__":${value}} was taken: ${answer.text}`);
    assert.match(answer.text, /"env"/, answer.text);
  }
});

test('a number too large for a double (1e400) is echoed as what it became, not as null', async (t) => {
  const daemon = await startTestDaemon(t);
  const session = await openSession(daemon.url);
  const answer = await rawCall(daemon.url, session, 'run', '{"command":"true","wait_seconds":1e400}');
  assert.equal(answer.isError, true, answer.text);
  assert.doesNotMatch(answer.text, /got null/, answer.text);
  assert.match(answer.text, /Infinity/, answer.text);
});
