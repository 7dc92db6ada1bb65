// What a model pays for a result: the bytes of structuredContent (what Claude Code and Codex hand the
// model) and of the text block (what Gemini and opencode hand it) for the calls an agent makes most.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';

/** The structured content and text of a call as a client gets it, without the helpers' defaults. */
async function callRaw(tools: ToolClient, name: string, args: Record<string, unknown>) {
  const result = await tools.client.callTool({ name, arguments: args });
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  const text = (result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
  const structured = result.structuredContent as Record<string, unknown>;
  return { structured, text, bytes: Buffer.byteLength(JSON.stringify(structured)), textBytes: Buffer.byteLength(text) };
}

test('run and status answer in a few hundred bytes, the text in fewer', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const echo = await callRaw(tools, 'run', { command: 'echo hi' });
  const running = await callRaw(tools, 'run', { command: 'sleep 30', wait_seconds: 0 });
  const status = await callRaw(tools, 'status', { id: echo.structured.id });
  t.diagnostic(`echo hi: ${echo.bytes} bytes structured, ${echo.textBytes} text: ${JSON.stringify(echo.structured)}`);
  t.diagnostic(
    `running: ${running.bytes} bytes structured, ${running.textBytes} text: ${JSON.stringify(running.structured)}`,
  );
  t.diagnostic(
    `status: ${status.bytes} bytes structured, ${status.textBytes} text: ${JSON.stringify(status.structured)}`,
  );
  assert.ok(echo.bytes <= 250, `echo hi: ${echo.bytes} bytes`);
  assert.ok(running.bytes <= 300, `a running task: ${running.bytes} bytes`);
  assert.ok(status.bytes <= 400, `status of a finished task: ${status.bytes} bytes`);
  for (const [what, answer] of Object.entries({ echo, running, status }))
    assert.ok(answer.textBytes < answer.bytes, `${what}: the text (${answer.textBytes} bytes) says it in fewer`);
  await tools.ok('kill', { id: running.structured.id, force: true });
});

test('a result leaves out what is null or at its default, and verbose gives every member', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const { structured: brief, text } = await callRaw(tools, 'run', {
    command: 'seq 1 3000; echo warn >&2; exit 3',
    wait_seconds: 10,
  });
  const whole = await tools.ok('status', { id: brief.id, verbose: true });
  assert.deepEqual(Object.keys(brief), [
    'id',
    'state',
    'exit_code',
    'runtime_ms',
    'stdout_tail',
    'stdout_bytes',
    'stderr_tail',
    'more',
  ]);
  assert.equal(brief.exit_code, 3);
  assert.equal(brief.stdout_bytes, 13_893);
  assert.equal(brief.stderr_tail, 'warn\n');
  assert.equal(brief.more, `output {"id": "${String(brief.id)}"} reads all of it; grep, head and tail pick lines`);
  for (const [key, value] of Object.entries(brief)) if (key !== 'more') assert.deepEqual(value, whole[key], key);
  assert.match(text, /^task task-1 done: exit 3 after \d+\.\d s\n--- stdout \(last 4096 of 13893 bytes\)\n1\n/);
  assert.match(text, /\n--- stderr\nwarn\n$/);
  // verbose: every member of the snapshot, null where there is none, the files named in the text.
  for (const key of ['name', 'signal', 'error', 'pid', 'stdout_path', 'limits', 'sandbox', 'ports'])
    assert.ok(key in whole, key);
  assert.equal(whole.name, null);
  const verboseText = (await tools.call('status', { id: brief.id, verbose: true })).text;
  assert.match(verboseText, new RegExp(`--- stdout \\(last 4096 of 13893 bytes\\): ${whole.stdout_path}\n`));

  // The other tools leave out their null members: an unnamed task's name, a kill that signalled nothing.
  const listed = await callRaw(tools, 'list', {});
  assert.equal('name' in (listed.structured.tasks as object[])[0]!, false);
  assert.equal((listed.structured.tasks as Array<{ exit_code: number }>)[0]!.exit_code, 3);
  const killed = await callRaw(tools, 'kill', { id: brief.id });
  assert.deepEqual(Object.keys(killed.structured), ['id', 'state', 'message']);
});
