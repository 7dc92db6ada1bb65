import assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { test } from 'node:test';
import { systemCallError } from '../../src/errors.js';
import { cutReason } from '../../src/workers/output-cap.js';
import { decodeWholeCharacters } from '../../src/supervisor/output/output-tail.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { findMarkedProcesses, waitFor } from '../helpers/processes.js';

test('output reaches its file while the task runs', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', {
    command: 'for i in 1 2 3 4 5 6 7 8 9 10; do echo "line $i"; sleep 0.1; done; sleep 30',
    wait_seconds: 0,
  });
  const sizes = new Set<number>();
  await waitFor(
    () => {
      // run returns at once (wait_seconds 0), possibly before the worker thread has created the file.
      if (existsSync(task.stdout_path)) sizes.add(statSync(task.stdout_path).size);
      return sizes.size >= 3;
    },
    5000,
    20,
  );
  assert.ok(sizes.size >= 3, `the file grew in steps while the task ran: ${[...sizes]}`);
  const live = await tools.ok('status', { id: task.id });
  assert.equal(live.state, 'running');
  assert.match(live.stdout_tail, /^line 1\n/);
  await waitFor(() => existsSync(task.stdout_path) && readFileSync(task.stdout_path, 'utf8').includes('line 10'), 5000);
  assert.equal(
    (await tools.ok('status', { id: task.id })).stdout_tail,
    Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join(''),
  );
  await tools.ok('kill', { id: task.id, force: true });
});

test('a task ends when its leader exits even if a grandchild holds stdout open', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const marker = `HOLDER=${daemon.marker}`;
  const task = await tools.ok('run', {
    command: 'sleep 60 & echo leader done',
    env: { HOLDER: daemon.marker },
    wait_seconds: 10,
  });
  assert.equal(task.state, 'done');
  assert.equal(task.exit_code, 0);
  assert.equal(task.stdout_tail, 'leader done\n');
  assert.ok(Number.isInteger(task.runtime_ms) && task.runtime_ms < 5000, `runtime ${task.runtime_ms}`);
  // Polled: a process mid-exec reads an empty environment for a moment.
  assert.ok(await waitFor(() => findMarkedProcesses(marker).length === 1), 'the sleep still runs');
  assert.equal(task.lingering, 1);
  const killed = await tools.ok('kill', { id: task.id });
  assert.equal(killed.state, 'done');
  assert.equal(killed.signal, 'SIGINT');
  assert.match(killed.message, /had already finished \(done\); sent SIGINT to the 1 process\(es\) it left running/);
  // `&` jobs of a non-interactive bash ignore SIGINT: only the escalation ends the sleep.
  assert.ok(await waitFor(() => findMarkedProcesses(marker).length === 0, 15_000), 'the sleep was ended');
  assert.equal((await tools.ok('status', { id: task.id })).lingering, 0);
  const again = await tools.ok('kill', { id: task.id });
  assert.equal('signal' in again, false, 'nothing was signalled: the result leaves signal out');
  assert.equal(again.message, `task ${task.id} had already finished (done) and nothing of it is left running`);
});

test('each stream keeps at most the cap, the task goes on and status says truncated', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-output-bytes', '100000'] });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', {
    command: 'head -c 300000 /dev/zero | tr "\\0" a; echo -n small >&2; echo after-cap >&2',
    wait_seconds: 20,
  });
  assert.equal(task.state, 'done');
  assert.equal(task.exit_code, 0, 'the task was not stopped by the cap');
  assert.equal(task.stdout_bytes, 100000);
  assert.equal(statSync(task.stdout_path).size, 100000);
  assert.equal(task.stdout_truncated, true);
  assert.equal(task.stderr_truncated, false);
  assert.equal(task.stderr_tail, 'smallafter-cap\n');
  const tail = await tools.ok('status', { id: task.id, tail_bytes: 10 });
  assert.equal(tail.stdout_tail, 'a'.repeat(10));
});

test("a task's end is told once its leader's output is in the file, while a grandchild still holds the pipes", async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-output-bytes', '0'] });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', {
    command: 'sleep 30 & head -c 3000000 /dev/zero | tr "\\0" a; echo -n last; echo -n fault >&2',
    wait_seconds: 20,
  });
  assert.deepEqual([task.state, task.exit_code, task.lingering], ['done', 0, 1]);
  assert.deepEqual([task.stdout_bytes, task.stderr_bytes], [3_000_004, 5]);
  assert.match(task.stdout_tail, /aaaalast$/);
  assert.equal(task.stderr_tail, 'fault');
  await tools.ok('kill', { id: task.id, force: true });
});

test('a write the shim could not make is told in the words of a write the daemon could not make', () => {
  const fd = openSync('/dev/full', 'w');
  let message = '';
  try {
    writeSync(fd, 'x');
  } catch (error) {
    message = (error as Error).message;
  } finally {
    closeSync(fd);
  }
  assert.match(message, /^ENOSPC: /);
  assert.equal(
    cutReason({ cause: 'write', error: systemCallError(osConstants.errno.ENOSPC, 'write') }, '/d/x.out', 10),
    `writing /d/x.out failed: ${message}`,
  );
});

test('a cap of 0 keeps all of the output', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-output-bytes', '0'] });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'head -c 5000000 /dev/zero', wait_seconds: 20 });
  assert.equal(task.stdout_bytes, 5_000_000);
  assert.equal(task.stdout_truncated, false);
});

test('tails are cut at character boundaries', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'printf "ééééé"' }); // 10 bytes
  for (const [tail, expected] of [
    [10, 'ééééé'],
    [9, 'éééé'],
    [3, 'é'],
    [1, ''],
  ] as const) {
    assert.equal(
      (await tools.ok('status', { id: task.id, tail_bytes: tail })).stdout_tail,
      expected,
      `tail_bytes ${tail}`,
    );
  }
});

test('decodeWholeCharacters drops partial characters at both ends', () => {
  const bytes = Buffer.from('a€b😀', 'utf8'); // 1 + 3 + 1 + 4 bytes
  assert.equal(decodeWholeCharacters(bytes), 'a€b😀');
  assert.equal(decodeWholeCharacters(bytes.subarray(2)), 'b😀');
  assert.equal(decodeWholeCharacters(bytes.subarray(0, 8)), 'a€b');
  assert.equal(decodeWholeCharacters(bytes.subarray(1, 4)), '€');
  assert.equal(decodeWholeCharacters(Buffer.from([0x80, 0x80, 0x80, 0x80, 0x41])), '\ufffdA');
});
