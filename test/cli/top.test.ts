// hive-bash top: one frame with --once and --json, and the live view on a real terminal quitting on q.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { spawn as spawnTerminal } from '@lydell/node-pty';
import { startTestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/processes.js';
import { awaitGate, CLI_JS, makeGate, runCli } from './cli.js';

test('hive-bash top against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const gate = makeGate(t);
  const cli = (...args: string[]) => runCli(t, daemon.url, args);
  for (const name of ['idle-a', 'idle-b'])
    assert.equal((await cli('run', '--name', name, '--detach', '--', awaitGate(gate))).code, 0);
  assert.equal((await cli('run', '--name', 'finished', '--wait', '20', '--', 'true')).code, 0);

  await t.test('top --once prints the totals, then the running tasks', async () => {
    const result = await cli('top', '--once', '--sort', 'memory');
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.match(
      lines[0]!,
      /^hive-bash top {2}http:\/\/127\.0\.0\.1:\d+\/mcp {2}\d\d:\d\d:\d\d UTC {2}sorted by memory$/,
    );
    assert.equal(lines[1], 'tasks: 2 running, 1 done');
    assert.match(lines[2]!, /^running: CPU \S+ {2}memory \S+ {2}processes \S+$/);
    assert.match(lines[4]!, /^ID +%CPU +CPU +MEM +PROCS +RUNTIME +COMMAND$/);
    assert.deepEqual(
      lines
        .slice(5)
        .map((line) => line.split(' ')[0])
        .sort(),
      ['idle-a', 'idle-b'],
    );
    assert.ok(!result.stdout.includes('\x1b['), 'no escape sequences off a terminal');
  });

  await t.test('top --json is one frame as a document', async () => {
    const result = await cli('top', '--json');
    assert.equal(result.code, 0, result.stderr);
    const frame = JSON.parse(result.stdout);
    assert.equal(frame.counts.running, 2);
    assert.deepEqual(frame.tasks.map((task: { id: string }) => task.id).sort(), ['idle-a', 'idle-b']);
    assert.ok('cpu_percent' in frame.tasks[0] && 'memory_bytes' in frame.totals);
  });

  await t.test('top on a terminal draws its frame on the alternate screen and quits on q', async () => {
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      HIVE_BASH_URL: daemon.url,
      TERM: 'xterm-256color',
    };
    delete env.NO_COLOR;
    const terminal = spawnTerminal(process.execPath, [CLI_JS, 'top'], { cols: 120, rows: 30, env });
    let screen = '';
    terminal.onData((data) => (screen += data));
    const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
    t.after(() => {
      try {
        terminal.kill('SIGKILL');
      } catch {
        // already gone
      }
    });
    await waitFor(() => screen.includes('press q to quit') && screen.includes('idle-a'), 20_000);
    assert.ok(screen.startsWith('\x1b[?1049h'), 'the alternate screen first');
    assert.ok(screen.includes('\x1b[1mhive-bash top\x1b[0m'), 'bold title: colour on a terminal');
    terminal.write('q');
    assert.equal(await exited, 0);
    assert.ok(
      screen.endsWith('\x1b[?25h\x1b[?1049l'),
      `the screen restored last: ${JSON.stringify(screen.slice(-40))}`,
    );
  });
});
