// The HTTP answers that send a client the right way, as raw requests see them: no OAuth metadata
// (404 without the token, so a client does not start registering), a 401 that says what to send,
// and 405 for a GET stream outside a 2025 session (a session's GET opens its stream: push.test.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { request } from 'undici';
import { startTestDaemon } from '../helpers/daemon.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

const TOKEN = 's3cret-token';
const UNAUTHORIZED = 'Unauthorized: send Authorization: Bearer TOKEN with the token from --auth-token-file\n';

/** A daemon that takes TOKEN (from a file in a folder removed after the test). */
async function startWithToken(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'token'), `${TOKEN}\n`);
  return startTestDaemon(t, { args: ['--auth-token-file', join(dir, 'token')] });
}

test('OAuth metadata is not found, without the token; a missing or wrong token gets 401 naming --auth-token-file', async (t) => {
  const daemon = await startWithToken(t);
  for (const path of [
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
  ]) {
    const res = await request(`${daemon.origin}${path}`);
    assert.equal(res.statusCode, 404, path);
    assert.match(await res.body.text(), /^Not found: this daemon has no OAuth; .*Authorization: Bearer TOKEN/);
  }
  for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: TOKEN }]) {
    const res = await request(daemon.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(INITIALIZE),
    });
    assert.equal(res.statusCode, 401, JSON.stringify(headers));
    assert.equal(res.headers['www-authenticate'], 'Bearer');
    assert.equal(await res.body.text(), UNAUTHORIZED);
  }
  const ok = await request(daemon.url, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(INITIALIZE),
  });
  assert.equal(ok.statusCode, 200);
  await ok.body.text();
});

test('GET and HEAD on /mcp answer 405 with Allow: POST outside a session; HEAD in a session 405 too', async (t) => {
  const daemon = await startTestDaemon(t);
  for (const method of ['GET', 'HEAD'] as const) {
    for (const headers of [
      { accept: 'text/event-stream' },
      { accept: 'text/event-stream', 'mcp-protocol-version': '2026-07-28' },
    ]) {
      const res = await request(daemon.url, { method, headers });
      assert.equal(res.statusCode, 405, `${method} ${JSON.stringify(headers)}`);
      assert.equal(res.headers.allow, 'POST');
      const body = await res.body.text();
      if (method === 'GET')
        assert.match(
          JSON.parse(body).error.message,
          /offers a GET stream only to a 2025 session \(with its Mcp-Session-Id\)/,
        );
    }
  }
  const init = await request(daemon.url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
  const session = String(init.headers['mcp-session-id']);
  await init.body.text();
  const res = await request(daemon.url, {
    method: 'HEAD',
    headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
  });
  assert.equal(res.statusCode, 405, 'HEAD in a session');
  assert.equal(res.headers.allow, 'GET, POST, DELETE');
  assert.equal(res.headers['content-type']?.toString().startsWith('text/event-stream'), false, 'no stream');
  await res.body.text();
});
