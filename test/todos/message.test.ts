// The todo message, made from a task's snapshot: its summary line and body, on real output files.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { NO_RESOURCES } from '../../src/process/resources.js';
import type { TaskRecord } from '../../src/supervisor/model/task.js';
import { readOutputTails, type SnapshotSource } from '../../src/supervisor/model/task-snapshot.js';
import {
  composeClear,
  composeTodo,
  composeUpsert,
  todoSnapshotSource,
} from '../../src/supervisor/todos/todo-message.js';

function withFiles(
  t: { after(fn: () => void): void },
  stdout: string,
  stderr: string,
): SnapshotSource & { leftAtEnd(): number } {
  const dir = mkdtempSync(join(tmpdir(), 'hive-todo-message-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'build.out'), stdout);
  writeFileSync(join(dir, 'build.err'), stderr);
  return {
    outputPaths: (id) => ({ stdout: join(dir, `${id}.out`), stderr: join(dir, `${id}.err`) }),
    outputTails: (record, tailBytes) =>
      readOutputTails({ stdout: join(dir, `${record.id}.out`), stderr: join(dir, `${record.id}.err`) }, tailBytes),
    countLingering: () => 2,
    leftAtEnd: () => 2,
    resourcesOf: () => ({ cpuMs: 5, memoryBytes: 1024, memoryPeakBytes: 2048, processes: 3, pidsLimitHits: null }),
    portsOf: () => ({ listed: [], unlisted: 0 }),
    stdinOpen: () => false,
    policyOf: () => null,
  };
}

const DONE: TaskRecord = {
  id: 'build',
  name: 'build',
  command: 'make all',
  cwd: '/src',
  pty: false,
  interactive: false,
  state: 'done',
  runKey: 'k',
  timeoutMs: null,
  exitCode: 2,
  signal: null,
  error: null,
  createdAt: 1_000,
  startedAt: 10_000,
  endedAt: 22_300,
  pid: 9,
  pgid: 9,
  namespacePid: 2,
  stdoutTruncated: false,
  stderrTruncated: true,
  cpuMs: null,
  todoShown: true,
  limits: { memoryLimitMb: null, maxProcesses: null, cpuLimit: null },
  oomKilled: false,
  pidsLimitHits: null,
  memoryPeakBytes: null,
  truncation: { stdout: null, stderr: 'the cap of 24 bytes was reached' },
  denials: { count: 0, recent: [] },
  sandbox: null,
  terminalSize: null,
};

test('an upsert sums the end up in one line and gives the command, exit, tails and paths', (t) => {
  const source = withFiles(t, 'compiling\nlinking\n', 'error: undefined symbol\n');
  const upsert = composeUpsert(DONE, source);
  assert.deepEqual(
    [upsert.cmd, upsert.source, upsert.key, upsert.state, upsert.updated_at],
    ['todo_upsert', 'bash', 'build', 'done', 22_300],
  );
  assert.equal(upsert.summary, 'bash task build done: exit 2 after 12.3 s; 2 process(es) still alive');
  const out = source.outputPaths('build');
  assert.equal(
    upsert.body,
    [
      'command: make all',
      'state: done',
      'exit: code 2',
      'runtime: 12.3 s',
      'still alive: 2 process(es) of the task (kill ends them)',
      `--- stdout (18 bytes): ${out.stdout}`,
      'compiling\nlinking',
      `--- stderr (24 bytes, truncated at the cap): ${out.stderr}`,
      'error: undefined symbol',
    ].join('\n'),
  );
});

test('a todo counts lingering processes only for a task that ended by itself, and shows no resource figures', (t) => {
  const live = withFiles(t, '', '');
  const source = todoSnapshotSource(live);
  assert.equal(source.countLingering(DONE), 2);
  assert.equal(source.countLingering({ ...DONE, state: 'killed' }), 0);
  assert.deepEqual(source.resourcesOf(DONE), NO_RESOURCES);
});

test('a signalled end names the signal, a spawn failure its error, and the summary stays one short line', (t) => {
  const source = withFiles(t, '', '');
  const killed = composeUpsert({ ...DONE, state: 'killed', exitCode: 130, signal: 'SIGINT' }, source);
  assert.match(killed.body, /^exit: signal SIGINT \(code 130\)$/m);
  const failed = composeUpsert(
    {
      ...DONE,
      exitCode: null,
      error: 'spawn failed: start hive-task-shim in /gone: ENOENT (errno 2)',
      command: 'x\n'.repeat(400),
    },
    source,
  );
  assert.equal(
    failed.summary,
    'bash task build done: spawn failed: start hive-task-shim in /gone: ENOENT (errno 2) after 12.3 s; 2 process(es) still alive',
  );
  assert.match(failed.body, /^error: spawn failed: /m);
  assert.ok(!failed.summary.includes('\n'));
});

test('the last twenty lines of a long stream are kept', (t) => {
  const lines = Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n');
  const upsert = composeUpsert(DONE, withFiles(t, `${lines}\n`, ''));
  assert.ok(upsert.body.includes('line 30\n'), upsert.body);
  assert.ok(!upsert.body.includes('line 29\n'));
});

test('a clear names only the key', (t) => {
  assert.deepEqual(composeClear('build'), { cmd: 'todo_clear', source: 'bash', key: 'build' });
  assert.deepEqual(composeTodo(DONE, 'clear', withFiles(t, '', '')), composeClear('build'));
});

test('an end at a limit says so in the summary and the body', (t) => {
  const source = withFiles(t, '', '');
  const oom = {
    ...DONE,
    exitCode: 137,
    signal: 'SIGKILL',
    oomKilled: true,
    error: 'killed by the kernel: out of memory (limit 64 MiB)',
    limits: { memoryLimitMb: 64, maxProcesses: 50, cpuLimit: null },
  };
  const upsert = composeUpsert(oom, { ...source, resourcesOf: () => ({ ...NO_RESOURCES, pidsLimitHits: 7 }) });
  assert.equal(
    upsert.summary,
    'bash task build done: killed by the kernel: out of memory (limit 64 MiB), SIGKILL (exit 137) after 12.3 s; 2 process(es) still alive',
  );
  assert.match(upsert.body, /^error: killed by the kernel: out of memory \(limit 64 MiB\)$/m);
  assert.match(upsert.body, /^forks refused at max_processes 50: 7$/m);
});
