// The lifecycle, a pure function, on every transition: the record it makes and the effects it asks for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { advance, type LifecycleEffects, type LifecycleEvent } from '../../src/supervisor/model/lifecycle.js';
import type { TaskRecord } from '../../src/supervisor/model/task.js';
import type { TaskState } from '../../src/shared/task-states.js';

const RUNNING = { stopping: false };
const STOPPING = { stopping: true };

function record(state: TaskState, changes: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id: 'build',
    name: 'build',
    command: 'make',
    cwd: '/tmp',
    pty: false,
    interactive: false,
    state,
    runKey: 'key-1',
    timeoutMs: null,
    exitCode: null,
    signal: null,
    error: null,
    createdAt: 1000,
    startedAt: state === 'pending' ? null : 1100,
    endedAt: null,
    pid: state === 'pending' ? null : 42,
    pgid: state === 'pending' ? null : 42,
    namespacePid: null,
    stdoutTruncated: false,
    stderrTruncated: false,
    cpuMs: null,
    todoShown: false,
    limits: { memoryLimitMb: null, maxProcesses: null, cpuLimit: null },
    oomKilled: false,
    pidsLimitHits: null,
    memoryPeakBytes: null,
    truncation: { stdout: null, stderr: null },
    denials: { count: 0, recent: [] },
    sandbox: null,
    terminalSize: null,
    ...changes,
  };
}

function effects(changes: Partial<LifecycleEffects> = {}): LifecycleEffects {
  return { persist: false, todo: null, finished: false, freedSlot: false, released: false, ...changes };
}

const ENDED = {
  type: 'ended',
  reason: 'exit',
  exitCode: 3,
  signal: null,
  error: null,
  endedAt: 2000,
  oomKilled: false,
  left: 0,
  cpuMs: null,
  pidsLimitHits: null,
  memoryPeakBytes: null,
} as const;

test('dispatch makes a pending task running in memory only: the start writes it', () => {
  const pending = record('pending');
  const next = advance(pending, { type: 'dispatched' }, RUNNING);
  assert.equal(next.record.state, 'running');
  assert.deepEqual(next.effects, effects());
  assert.deepEqual(advance(record('killed'), { type: 'dispatched' }, RUNNING).record.state, 'killed');
});

test('the start records pid, group and time in one write, upserting a shown todo', () => {
  const started: LifecycleEvent = { type: 'started', pid: 7, pgid: 7, namespacePid: 3, startedAt: 1500 };
  const hidden = advance(record('running', { pid: null, pgid: null, startedAt: null }), started, RUNNING);
  assert.deepEqual(
    [hidden.record.pid, hidden.record.pgid, hidden.record.namespacePid, hidden.record.startedAt],
    [7, 7, 3, 1500],
  );
  assert.deepEqual(hidden.effects, effects({ persist: true }));
  const shown = advance(record('running', { todoShown: true }), started, RUNNING);
  assert.deepEqual(shown.effects, effects({ persist: true, todo: 'upsert' }));
});

test('an exit ends the task as done, frees its slot and upserts a shown todo', () => {
  const next = advance(record('running', { todoShown: true }), ENDED, RUNNING);
  assert.deepEqual([next.record.state, next.record.exitCode, next.record.endedAt], ['done', 3, 2000]);
  assert.deepEqual(next.effects, effects({ persist: true, todo: 'upsert', finished: true, freedSlot: true }));
  const quiet = advance(record('running'), ENDED, RUNNING);
  assert.equal(quiet.effects.todo, null, 'a todo never shown is not upserted');
});

test('an end the daemon caused says so: killed or timed_out, with the signal', () => {
  const killed = advance(record('running'), { ...ENDED, reason: 'killed', exitCode: 130, signal: 'SIGINT' }, RUNNING);
  assert.deepEqual([killed.record.state, killed.record.exitCode, killed.record.signal], ['killed', 130, 'SIGINT']);
  const timedOut = advance(
    record('running'),
    { ...ENDED, reason: 'timed_out', exitCode: 143, signal: 'SIGTERM' },
    RUNNING,
  );
  assert.equal(timedOut.record.state, 'timed_out');
});

test('an OOM kill leads the error, and keeps any other reason the end carried after it', () => {
  const limited = record('running', { limits: { memoryLimitMb: 64, maxProcesses: null, cpuLimit: null } });
  const oom = { ...ENDED, exitCode: 137, signal: 'SIGKILL', oomKilled: true } as const;
  const plain = advance(limited, oom, RUNNING);
  assert.deepEqual(
    [plain.record.oomKilled, plain.record.error, plain.record.exitCode],
    [true, 'killed by the kernel: out of memory (limit 64 MiB)', 137],
  );
  const shimKilled = 'the task ended without reporting its exit (its shim was killed)';
  const both = advance(limited, { ...oom, exitCode: null, signal: null, error: shimKilled }, RUNNING);
  assert.equal(both.record.error, `killed by the kernel: out of memory (limit 64 MiB); ${shimKilled}`);
});

test('while the daemon stops, every end is interrupted and shown', () => {
  const next = advance(record('running'), ENDED, STOPPING);
  assert.deepEqual(
    [next.record.state, next.record.todoShown, next.record.error],
    ['interrupted', true, 'the daemon stopped while the task was running'],
  );
  assert.equal(next.effects.todo, 'upsert');
});

test('a second end does not overwrite the first', () => {
  const done = record('done', { exitCode: 0, endedAt: 1900 });
  const next = advance(done, { ...ENDED, reason: 'killed' }, RUNNING);
  assert.equal(next.record, done);
  assert.deepEqual(next.effects, effects());
});

test("truncation is written at once, a running task's too (a crash would lose it)", () => {
  const running = advance(
    record('running'),
    { type: 'truncated', stream: 'stdout', reason: 'the cap of 10 bytes was reached' },
    RUNNING,
  );
  assert.deepEqual(
    [running.record.stdoutTruncated, running.record.truncation, running.effects.persist],
    [true, { stdout: 'the cap of 10 bytes was reached', stderr: null }, true],
  );
  const finished = advance(
    record('done'),
    { type: 'truncated', stream: 'stderr', reason: 'the disk is full' },
    RUNNING,
  );
  assert.deepEqual(
    [finished.record.stderrTruncated, finished.record.truncation.stderr, finished.effects.persist],
    [true, 'the disk is full', true],
  );
});

test('the release keeps the CPU time (written only when there is one) and lets the task go', () => {
  const withCpu = advance(
    record('done'),
    { type: 'released', cpuMs: 12, pidsLimitHits: null, memoryPeakBytes: null, stdoutBytes: 0, stderrBytes: 0 },
    RUNNING,
  );
  assert.deepEqual([withCpu.record.cpuMs, withCpu.effects], [12, effects({ persist: true, released: true })]);
  const without = advance(
    record('done'),
    { type: 'released', cpuMs: null, pidsLimitHits: null, memoryPeakBytes: null, stdoutBytes: 0, stderrBytes: 0 },
    RUNNING,
  );
  assert.deepEqual(without.effects, effects({ released: true }));
});

test('a pending task is cancelled as killed without taking a slot; a running one is not', () => {
  const next = advance(record('pending', { todoShown: true }), { type: 'cancelled', endedAt: 1200 }, RUNNING);
  assert.deepEqual([next.record.state, next.record.endedAt, next.record.exitCode], ['killed', 1200, null]);
  assert.deepEqual(next.effects, effects({ persist: true, todo: 'upsert', finished: true }));
  assert.deepEqual(advance(record('running'), { type: 'cancelled', endedAt: 1200 }, RUNNING).effects, effects());
});

test('a failure ends an unfinished task as done with the error, and always releases it', () => {
  const next = advance(record('running'), { type: 'failed', error: 'internal error: boom', endedAt: 1300 }, RUNNING);
  assert.deepEqual(
    [next.record.state, next.record.error, next.record.exitCode],
    ['done', 'internal error: boom', null],
  );
  assert.deepEqual(next.effects, effects({ persist: true, finished: true, freedSlot: true, released: true }));
  const late = advance(record('done'), { type: 'failed', error: 'x', endedAt: 1300 }, RUNNING);
  assert.deepEqual([late.record.error, late.effects], [null, effects({ released: true })]);
});

test('an interruption ends any unfinished task and always shows its todo', () => {
  const next = advance(
    record('pending'),
    { type: 'interrupted', error: 'the daemon stopped before the task started', endedAt: 1400 },
    RUNNING,
  );
  assert.deepEqual(
    [next.record.state, next.record.todoShown, next.record.error],
    ['interrupted', true, 'the daemon stopped before the task started'],
  );
  assert.deepEqual(next.effects, effects({ persist: true, todo: 'upsert', finished: true }));
  const running = advance(record('running'), { type: 'interrupted', error: 'x', endedAt: 1400 }, RUNNING);
  assert.equal(running.effects.freedSlot, true);
});

test("run's wait being over shows the todo of a task still going, and of no other", () => {
  const next = advance(record('running'), { type: 'shown' }, RUNNING);
  assert.deepEqual([next.record.todoShown, next.effects], [true, effects({ persist: true, todo: 'upsert' })]);
  assert.deepEqual(advance(record('done'), { type: 'shown' }, RUNNING).effects, effects());
  assert.deepEqual(advance(record('running'), { type: 'shown' }, STOPPING).effects, effects());
});

test('handing over a finished result clears a shown todo, once', () => {
  const next = advance(record('done', { todoShown: true }), { type: 'handed-over' }, RUNNING);
  assert.deepEqual([next.record.todoShown, next.effects], [false, effects({ persist: true, todo: 'clear' })]);
  assert.deepEqual(advance(next.record, { type: 'handed-over' }, RUNNING).effects, effects());
  assert.deepEqual(
    advance(record('running', { todoShown: true }), { type: 'handed-over' }, RUNNING).effects,
    effects(),
    'a running task keeps its todo',
  );
  assert.deepEqual(
    advance(record('done', { todoShown: true }), { type: 'handed-over' }, STOPPING).effects,
    effects(),
    'at a stop the end stays shown',
  );
});
