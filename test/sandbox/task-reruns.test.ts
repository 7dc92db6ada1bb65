// A run from one of the daemon's tasks reuses the name of a finished task only if that task's run
// came from the same task. Before, a task could start a sibling (outside its own kill) that reran
// the killed task's name with `echo 120 passed`: the agent's next status showed it done, exit 0,
// and the harness got a todo_clear (the ninth hostile round).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

/** A task's node script: runs each name of argv (command `echo NAME`) through the daemon in turn; prints the state or error code of each. */
const RERUN_SCRIPT = String.raw`
const [port, ...names] = process.argv.slice(1);
const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
for (const name of names) {
  const res = await fetch('http://127.0.0.1:' + port + '/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'run' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'run', arguments: { command: 'echo 120 passed', name, wait_seconds: 10 }, _meta: meta } }),
  });
  const result = (await res.json()).result?.structuredContent;
  console.log(name + ' ' + (result?.error?.code ?? result?.state));
}`;

test("a task's run may not replace a finished task it did not start; its own it may", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: 'sleep 300', name: 'tests' });
  await tools.ok('kill', { id: 'tests' });
  await tools.statusWhen('tests', (view) => view.state === 'killed', 'the task is killed');
  const { port } = new URL(daemon.url);
  const run = await tools.ok('run', {
    command: `'${process.execPath}' --input-type=module -e "$SCRIPT" ${port} tests mine mine`,
    env: { SCRIPT: RERUN_SCRIPT },
    wait_seconds: 30,
  });
  assert.equal(run.stdout_tail, 'tests ERR_NAME_BUSY\nmine done\nmine done\n', run.stderr_tail);
  const tests = await tools.ok('status', { id: 'tests' });
  assert.deepEqual([tests.state, tests.stdout_tail ?? ''], ['killed', ''], 'the killed task stays as it ended');
  // From outside the tasks, a name is rerun as before.
  assert.equal((await tools.ok('run', { command: 'true', name: 'tests', wait_seconds: 10 })).state, 'done');
});
