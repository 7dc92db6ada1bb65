// A daemon SIGKILLed with a backlog of pending runs of long commands, then started again on the same
// state dir: the start ends them all as interrupted, each with its todo, without holding the
// backlog or writing it again (a page of rows at a time, each command read only as far as its todo
// shows it, and kept out of the row that each change of state rewrites). Full size
// (HIVE_BATTERY_FULL=1): 9,990 runs of 256 KiB, the backlog that once took 65.7 s and 2.8 GB.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { MAX_COMMAND_BYTES } from '../../src/supervisor/mcp/tools/run.js';
import { batterySize, healthz, RawSession, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';

const RUNS = batterySize(200, 9990);
/** A todo shows a command's first 2,000 characters. */
const COMMAND_CHARS_SHOWN = 2000;
/** Runs of 256 KiB per POST: a body holds at most 4 MiB. */
const PER_POST = 14;

/** A figure of /proc/PID/io or /proc/PID/status, by name. */
function procFigure(pid: number, file: 'io' | 'status', name: string): number {
  return Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/${file}`, 'latin1'))?.[1]);
}

test(
  `a start after ${RUNS} pending runs of 256 KiB ends them without loading or rewriting them`,
  { timeout: 1_800_000 },
  async (t) => {
    // The bytes bound lets the whole backlog wait (a daemon without the bound ignores the variable).
    const args = ['--max-running', '1', '--retention-count', String(2 * RUNS)];
    const env = { HIVE_BASH_MAX_PENDING_BYTES: String(2 * RUNS * MAX_COMMAND_BYTES) };
    const first = await startTestDaemon(t, { args, env });
    const session = await RawSession.open(first.url);
    await session.all('run', [{ command: 'sleep 600', name: 'slot', wait_seconds: 0 }]);
    const command = (i: number) => `: ${String(i).padStart(6, '0')} ${'x'.repeat(MAX_COMMAND_BYTES - 9)}`;
    for (let i = 0; i < RUNS; i += PER_POST) {
      const calls = Array.from({ length: Math.min(PER_POST, RUNS - i) }, (_, j) => ({
        command: command(i + j),
        wait_seconds: 0,
        verbose: false,
      }));
      for (const task of await session.all('run', calls, PER_POST)) assert.equal(task.state, 'pending');
    }
    await first.crash();

    const began = performance.now();
    const second = await startTestDaemon(t, {
      stateDir: first.stateDir,
      args,
      env: { ...env, HIVE_TEST_MARK: first.marker },
    });
    const listenMs = Math.round(performance.now() - began);
    const pid = second.child.pid!;
    const written = procFigure(pid, 'io', 'wchar');
    const peakKb = procFigure(pid, 'status', 'VmHWM');
    const counts = (await healthz(second.origin)).tasks;
    report(t, { runs: RUNS, listen_ms: listenMs, written_bytes: written, peak_rss_kb: peakKb });
    assert.deepEqual([counts.interrupted, counts.pending, counts.running], [RUNS + 1, 0, 0]);
    // The backlog is RUNS × 256 KiB; its todos are 2 KiB or so each.
    assert.ok(written < (RUNS * MAX_COMMAND_BYTES) / 8, `the start wrote ${written} bytes for ${RUNS} runs`);

    const again = await RawSession.open(second.url);
    const [last] = await again.all('status', [{ id: `task-${RUNS}`, peek: true, verbose: true }]);
    assert.equal(last.state, 'interrupted');
    assert.equal(last.error, 'the daemon stopped before the task started');
    assert.equal(last.command, command(RUNS - 1), 'the command is whole');
    const outbox = (await (await fetch(`${second.origin}/todos`)).json()) as any;
    const todo = outbox.outbox.find((entry: any) => entry.key === 'task-1').request;
    assert.equal(todo.state, 'interrupted');
    const shown = `command: ${command(0).slice(0, COMMAND_CHARS_SHOWN)}... (cut at ${COMMAND_CHARS_SHOWN} characters; status of its id with verbose gives it whole)\n`;
    assert.ok(todo.body.startsWith(shown), todo.body.slice(0, 100));
  },
);
