// hive-bash speaks MCP 2026-07-28 to a daemon that offers it (server/discover), with no session,
// and falls back to a 2025 session with one that does not.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { runCli } from './cli.js';

async function sessions(url: string): Promise<number> {
  return ((await (await fetch(new URL('/healthz', url))).json()) as { sessions: number }).sessions;
}

test('hive-bash calls a daemon that offers 2026-07-28 in that era, without opening a session', async (t) => {
  const daemon = await startTestDaemon(t);
  const ran = await runCli(t, daemon.url, ['run', '--name', 'hello', '--', 'echo hello']);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /hello/);
  const listed = await runCli(t, daemon.url, ['--json', 'list']);
  assert.deepEqual(
    JSON.parse(listed.stdout).tasks.map((task: { id: string }) => task.id),
    ['hello'],
  );
  assert.equal(await sessions(daemon.url), 0, 'no initialize was sent');
});

test('hive-bash falls back to initialize and a session where server/discover is refused as an older daemon refuses it', async (t) => {
  const daemon = await startTestDaemon(t);
  const target = new URL(daemon.url);
  let refused = 0;
  let opened = 0;
  // An older daemon: the same one behind a proxy that answers 2026-07-28 requests as the daemon did before it spoke that era.
  const proxy = createServer((req, res) => {
    if (req.headers['mcp-protocol-version'] === '2026-07-28') {
      refused++;
      req.resume();
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(
          '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: send an initialize request first, then the Mcp-Session-Id header it returns"},"id":null}',
        );
      return;
    }
    const forwarded = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host },
      },
      (answer) => {
        if (answer.headers['mcp-session-id'] !== undefined && req.headers['mcp-session-id'] === undefined) opened++;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => proxy.close(() => resolve())));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
  const ran = await runCli(t, url, ['run', '--', 'echo fallback']);
  assert.equal(ran.code, 0, ran.stderr);
  assert.match(ran.stdout, /fallback/);
  assert.equal(refused, 1, 'server/discover was tried once, then the 2025 era');
  assert.equal(opened, 1, 'an initialize opened a session');
  assert.equal(await sessions(daemon.url), 0, 'the CLI ended its session on exit');
});
