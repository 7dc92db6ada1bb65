// Input to a task that never reads its stdin is bounded: once what it has not read and a new input
// would pass the bound, the input is refused with ERR_INPUT_QUEUE_FULL, naming the bound and what is
// queued, and nothing of it is written; an eof alone is still taken. On a pipe and on a terminal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_INPUT_BYTES } from '../../src/supervisor/mcp/shared-fields.js';
import { MAX_QUEUED_INPUT_BYTES } from '../../src/workers/task-input.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

/** Inputs sent before giving up on a refusal: far past the bound (50 of them grew the daemon by 116 MB). */
const MOST_INPUTS = 8;

for (const pty of [false, true]) {
  test(`input to a task that does not read is refused past the bound, on a ${pty ? 'terminal' : 'pipe'}`, async (t) => {
    const daemon = await startTestDaemon(t);
    const tools = await connectClient(t, daemon.url);
    const id = pty ? 'deaf-pty' : 'deaf-pipe';
    // A terminal in canonical mode takes without end what does not fit its line (it drops it and
    // echoes it), so the queue would drain; raw and without echo it takes its buffers' worth and stops.
    await tools.ok('run', {
      command: `${pty ? 'stty raw -echo; echo ready; ' : ''}sleep 600`,
      name: id,
      interactive: true,
      pty,
      wait_seconds: 0,
    });
    while (pty && (await tools.ok('status', { id, wait_for: '^ready', wait_seconds: 30 })).wait_result !== 'matched');
    const text = `${'y'.repeat(MAX_INPUT_BYTES - 1)}\n`;
    let queued = 0;
    let refusal: { text: string; structured: any } | null = null;
    for (let sent = 0; sent < MOST_INPUTS && refusal === null; sent++) {
      const answer = await tools.call('input', { id, text });
      if (answer.isError) refusal = answer;
      else queued = answer.structured.pending_bytes;
    }
    assert.ok(refusal, `${MOST_INPUTS} inputs of ${MAX_INPUT_BYTES} bytes were all queued`);
    assert.ok(queued > 0 && queued <= MAX_QUEUED_INPUT_BYTES, `${queued} bytes queued`);
    // A terminal goes on taking a little of it until its buffers are full: queued now is at most what the last answer said.
    const now = Number(/ holds (\d+) bytes /.exec(refusal.text)?.[1]);
    assert.ok(now > 0 && now <= queued, `${now} bytes said queued, after ${queued}`);
    const message = `input to task "${id}" refused: its stdin holds ${now} bytes the task has not read, and these ${MAX_INPUT_BYTES} would pass the ${MAX_QUEUED_INPUT_BYTES} bytes a task may have queued; nothing was written: wait until it reads (status shows what it printed), or kill it`;
    assert.deepEqual(refusal.structured.error, { code: 'ERR_INPUT_QUEUE_FULL', message });
    assert.equal(refusal.text, message);
    // The refused input with eof left stdin open; an eof alone then closes it.
    const withEof = await tools.call('input', { id, text, eof: true });
    assert.equal(withEof.structured.error.code, 'ERR_INPUT_QUEUE_FULL');
    assert.equal((await tools.ok('status', { id })).stdin_open, true);
    const closed = await tools.ok('input', { id, text: '', eof: true });
    assert.equal(closed.stdin_open, false);
    await tools.ok('kill', { id, force: true });
  });
}
