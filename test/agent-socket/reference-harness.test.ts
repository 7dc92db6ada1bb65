import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test, type TestContext } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

const AGENT_SOCKET_JS = new URL('../../src/agent-socket/main.js', import.meta.url).pathname;

interface ReferenceHarness {
  path: string;
  child: ChildProcess;
  lines: Array<Record<string, unknown>>;
  stderr: () => string;
}

/** Runs hive-agent-socket on `path` (by default one in a fresh folder, removed after the test); it is gone after the test. */
async function startReferenceHarness(t: TestContext, path?: string): Promise<ReferenceHarness> {
  const dir = path === undefined ? mkdtempSync(join(tmpdir(), 'hive-agent-socket-')) : null;
  path ??= join(dir!, 'agent.sock');
  const child = spawn(process.execPath, [AGENT_SOCKET_JS, '--socket', path], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const lines: Array<Record<string, unknown>> = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line)));
  assert.ok(await waitFor(() => lines.length > 0), `hive-agent-socket did not start: ${stderr}`);
  assert.deepEqual(lines[0], { event: 'listening', socket: path });
  return { path, child, lines, stderr: () => stderr };
}

/** Sends raw lines to the socket and returns the answer lines. */
async function ask(path: string, lines: string[]): Promise<string[]> {
  const socket = createConnection(path);
  socket.setEncoding('utf8');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(lines.map((line) => `${line}\n`).join(''));
  await waitFor(() => text.split('\n').length > lines.length);
  socket.destroy();
  return text.trimEnd().split('\n');
}

test("hive-agent-socket takes the daemon's todos and prints each change as a JSON line", async (t) => {
  const harness = await startReferenceHarness(t);
  assert.equal(statSync(harness.path).mode & 0o777, 0o600);
  const daemon = await startTestDaemon(t, { args: ['--agent-socket', harness.path] });
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: 'sleep 0.3; echo hello', name: 'demo', wait_seconds: 0 });
  const done = await waitFor(() => harness.lines.find((line) => line.event === 'todo_upsert' && line.state === 'done'));
  assert.ok(done, JSON.stringify(harness.lines));
  assert.equal(done.source, 'bash');
  assert.equal(done.key, 'demo');
  assert.equal(done.open_todos, 1);
  assert.match(done.body as string, /^hello$/m);
  await tools.ok('status', { id: 'demo' });
  const cleared = await waitFor(() => harness.lines.find((line) => line.event === 'todo_clear'));
  assert.deepEqual(
    { ...cleared, received_at: 0 },
    { event: 'todo_clear', received_at: 0, open_todos: 0, source: 'bash', key: 'demo', existed: true },
  );
});

test('hive-agent-socket answers a request it cannot read with ok:false and says why, and removes its socket on SIGTERM', async (t) => {
  const harness = await startReferenceHarness(t);
  const answers = await ask(harness.path, [
    'not json',
    '{"cmd":"todo_upsert","source":"bash","key":"k"}',
    '{"cmd":"explode"}',
    '{"cmd":"wake","from":"matrix","body":"hi"}',
  ]);
  assert.deepEqual(
    answers.map((line) => JSON.parse(line)),
    [
      { ok: false, error: 'the request is not JSON: got "not json"; send one JSON object per line' },
      {
        ok: false,
        error:
          'todo_upsert needs string fields source, key, state, summary, body; missing or not a string: state, summary, body',
      },
      { ok: false, error: 'unknown cmd "explode"; accepted: todo_upsert, todo_clear, wake' },
      { ok: true },
    ],
  );
  assert.match(harness.stderr(), /refused "not json"/);
  harness.child.kill('SIGTERM');
  await once(harness.child, 'exit');
  assert.equal(existsSync(harness.path), false);
  assert.deepEqual(harness.lines.at(-1), { event: 'stopped', open_todos: 0 });
});

test('hive-agent-socket replaces a stale socket file but refuses a path another process serves', async (t) => {
  const first = await startReferenceHarness(t);
  const busy = spawn(process.execPath, [AGENT_SOCKET_JS, first.path], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  busy.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const [code] = await once(busy, 'exit');
  assert.equal(code, 2);
  assert.equal(stderr, `hive-agent-socket: another process serves ${first.path}; stop it or choose another path\n`);
  first.child.kill('SIGKILL');
  await once(first.child, 'exit');
  assert.equal(existsSync(first.path), true, 'a killed server leaves its socket file');
  const second = await startReferenceHarness(t, first.path);
  assert.deepEqual(
    (await ask(second.path, ['{"cmd":"todo_clear","source":"bash","key":"gone"}'])).map((line) => JSON.parse(line)),
    [{ ok: true }],
  );
  assert.deepEqual(second.lines.at(-1), {
    event: 'todo_clear',
    received_at: second.lines.at(-1)!.received_at,
    open_todos: 0,
    source: 'bash',
    key: 'gone',
    existed: false,
  });
});
