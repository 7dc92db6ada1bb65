// hive-bash logs --grep/-C/--since/--max-bytes and hive-bash screen, read through the daemon's
// output tool; wait --until refused by the daemon's pattern check and by its budget.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { runCli } from './cli.js';

test('hive-bash logs and screen against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const cli = (...args: string[]) => runCli(t, daemon.url, args);
  const log = 'for i in $(seq 1 2000); do if [ $i -eq 1500 ]; then echo "ERROR at $i" >&2; fi; echo "line $i"; done';
  assert.equal((await cli('run', '--name', 'log', '--wait', '20', '--', log)).code, 0);

  await t.test('logs --grep -C prints the matches numbered as grep -n -C does', async () => {
    assert.deepEqual(await cli('logs', 'log', '--grep', '^line 100[05]$', '-C', '1', '--stdout'), {
      code: 0,
      stdout: '999-line 999\n1000:line 1000\n1001-line 1001\n--\n1004-line 1004\n1005:line 1005\n1006-line 1006\n',
      stderr: '',
    });
    assert.deepEqual(await cli('logs', 'log', '--grep', 'ERROR'), {
      code: 0,
      stdout: '[stderr] 1:ERROR at 1500\n',
      stderr: '',
    });
  });

  await t.test('logs --json prints the next cursor, and --since reads only what came after it', async () => {
    const first = JSON.parse((await cli('--json', 'logs', 'log', '--stdout', '-n', '2')).stdout);
    assert.equal(first.stdout.text, 'line 1999\nline 2000\n');
    assert.equal(typeof first.next, 'string');
    assert.deepEqual(await cli('logs', 'log', '--stdout', '--since', first.next), { code: 0, stdout: '', stderr: '' });
    assert.deepEqual(
      await cli('logs', 'log', '--since', first.next),
      { code: 0, stdout: '[stderr] ERROR at 1500\n', stderr: '' },
      'the cursor of a stdout read leaves stderr unread',
    );
  });

  await t.test('logs --max-bytes keeps the beginning and the end and says what it left out', async () => {
    const { code, stdout } = await cli('logs', 'log', '--stdout', '--max-bytes', '40');
    assert.equal(code, 0);
    assert.match(
      stdout,
      /^line 1\nline 2\n\[\.\.\. 1996 lines \(\d+ bytes\) left out \.\.\.\]\nline 1999\nline 2000\n$/,
    );
    assert.equal(
      (await cli('logs', 'log', '-C', '2')).stderr,
      'hive-bash logs: -C is taken only with --grep (the lines around each match); got -C 2 without --grep\n',
    );
  });

  await t.test('screen prints what the terminal of a pty task shows', async () => {
    assert.equal(
      (
        await cli(
          'run',
          '--name',
          'drawn',
          '--pty',
          '--wait',
          '10',
          '--',
          "printf '\\033[2J\\033[2;3Hhi there\\033[1;1H'",
        )
      ).code,
      0,
    );
    const { code, stdout } = await cli('screen', 'drawn');
    assert.equal(code, 0);
    const rows = stdout.split('\n');
    assert.deepEqual(rows.slice(0, 3), ['', '  hi there', '']);
    assert.match(stdout, /--- 120x40, cursor at row 0 col 0; task done\n$/);
    const refused = await cli('screen', 'log');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /"screen" is for a task run with pty: true; task log runs on pipes/);
  });

  await t.test('wait --until with a pattern the daemon cannot run in linear time is a usage error', async () => {
    const result = await cli('wait', 'log', '--until', '(a)\\1');
    assert.equal(result.code, 2);
    assert.match(result.stderr, /^hive-bash wait: --until must be a regular expression that runs in linear time/);
  });

  // Node 22 and later's V8 runs this pattern through its linear engine within the budget: there it
  // ends as an ordinary wait (exit 1). Node 20's engine is the one this bound is for.
  const linearFast = Number(process.versions.node.split('.')[0]) >= 22;
  await t.test(
    'wait --until with a pattern that runs past its budget is a usage error',
    { skip: linearFast && "Node 22+'s V8 matches this pattern within the budget" },
    async () => {
      const aaa = `awk 'BEGIN { line = sprintf("%2000s", ""); gsub(/ /, "a", line); for (i = 0; i < 50; i++) print line "b" }'`;
      assert.equal((await cli('run', '--name', 'aaa', '--wait', '20', '--', aaa)).code, 0);
      const result = await cli('wait', 'aaa', '--until', `${'(?:a+)+'.repeat(140)}$`);
      assert.equal(result.code, 2);
      assert.match(result.stderr, /^hive-bash wait: --until took too long to match: "\(\?:a\+\)\+/);
    },
  );
});
