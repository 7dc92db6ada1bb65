// Which of Node's own modules the daemon's code loads. An import of one of Node's modules reads
// every export of it, and on Node 22 and later some exports are getters that load more: three of
// node:http's (WebSocket, CloseEvent, MessageEvent) Node's own undici, with HTTP/2 and more (3.2 MB
// of an idle daemon's RSS on Node 24, 89.5 against 86.3 MB, two runs each); node:fs's `promises` the
// promises API with readline and the REPL's history, and node:util's its diffs and colours (18
// modules, 0.8 MB of an idle daemon on Node 24). The daemon's modules and its worker thread's,
// imported as main.ts and the thread import them in a real Node process, must leave those unloaded;
// on Node 22 and later the same process then shows that imports of the three would have loaded them.
// (On Node 20 the ESM loader itself loads node:fs's promises API, so only undici is checked there.)
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
/** What node:fs's and node:util's getters load on Node 22 and later. */
const GETTER_MODULES = /^NativeModule internal\/(fs\/promises|readline\/interface|repl\/history|util\/diff)$/;

const CHILD = `
for (const url of ${JSON.stringify(DAEMON_URLS)}) await import(url);
const daemon = [...process.moduleLoadList];
await import('node:http');
await import('node:fs');
await import('node:util');
process.stdout.write(JSON.stringify({ daemon, imported: process.moduleLoadList }));
`;

test("the daemon's modules load node:http, node:fs and node:util without what an import of them loads on Node 22 and later", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', CHILD], {
    timeout: 120_000,
  });
  const { daemon, imported } = JSON.parse(stdout) as { daemon: string[]; imported: string[] };
  assert.ok(daemon.includes('NativeModule http'), 'the daemon loads node:http');
  assert.deepEqual(
    daemon.filter((name) => FETCH_MODULES.test(name)),
    [],
  );
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22) return;
  assert.deepEqual(
    daemon.filter((name) => GETTER_MODULES.test(name)),
    [],
  );
  assert.ok(
    imported.some((name) => FETCH_MODULES.test(name)),
    'an import of node:http loads undici',
  );
  assert.equal(
    imported.filter((name) => GETTER_MODULES.test(name)).length,
    4,
    'imports of node:fs and node:util load the promises API, readline, the REPL history and diff',
  );
});
