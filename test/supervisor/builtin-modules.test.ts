// Which of Node's own modules the daemon's code loads. An import of node:http reads every export of
// it, and on Node 22 and later three are getters (WebSocket, CloseEvent, MessageEvent) that load
// Node's own undici, with HTTP/2 and more (3.2 MB of an idle daemon's RSS on Node 24, 89.5 against
// 86.3 MB, two runs each): src/supervisor/http/server.ts requires it instead. The daemon's modules
// and its worker thread's, imported as main.ts and the thread import them in a real Node process,
// must leave undici unloaded; on Node 22 and later the same process then shows that an import of
// node:http would have loaded it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';

const DAEMON_URLS = [
  '../../src/supervisor/log.js',
  '../../src/supervisor/daemon.js',
  '../../src/workers/task-worker.js',
].map((path) => new URL(path, import.meta.url).href);
/** Node's own fetch, and HTTP/2, which only it brings along here. */
const FETCH_MODULES = /^NativeModule (internal\/deps\/undici\/undici|http2)$/;

const CHILD = `
for (const url of ${JSON.stringify(DAEMON_URLS)}) await import(url);
const daemon = [...process.moduleLoadList];
await import('node:http');
process.stdout.write(JSON.stringify({ daemon, imported: process.moduleLoadList }));
`;

test("the daemon's modules load node:http without what an import of it loads on Node 22 and later", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD], {
    timeout: 120_000,
  });
  const { daemon, imported } = JSON.parse(stdout) as { daemon: string[]; imported: string[] };
  assert.ok(daemon.includes('NativeModule http'), 'the daemon loads node:http');
  assert.deepEqual(
    daemon.filter((name) => FETCH_MODULES.test(name)),
    [],
  );
  if (Number(process.versions.node.split('.')[0]) < 22) return;
  assert.ok(
    imported.some((name) => FETCH_MODULES.test(name)),
    'an import of node:http loads undici',
  );
});
