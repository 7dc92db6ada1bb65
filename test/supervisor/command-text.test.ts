// The command text reaches a task's bash on an fd, never in a command line, and the command sees
// what `bash -c COMMAND` gives it: each case runs through the daemon and as `bash -c` right here,
// and both must print and exit alike.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const CASES = [
  'echo "$0 $#"',
  'exit 7',
  'false',
  'set -e; false; echo not reached',
  'set -u; echo "$undefined_variable"',
  'echo one; exit 3; echo two',
  'sleep 0.1 & echo "$(jobs -p | wc -l) job"; wait; echo "waited $?"',
  'true &',
  'echo "fd 3: $( { true >&3; } 2>&1 >/dev/null && echo open || echo closed)"',
  'declare -p __hive_bash_command 2>/dev/null || echo "no variable of the daemon\'s"',
  "printf '%s|' \"a  b\" 'c\\d' $'e\\tf'; echo",
  'f() { return 4; }; f; echo "returned $?"',
  'if true; then\n  echo "line $LINENO"\nfi',
];

test('a command sees what bash -c gives it: $0, exit codes, exit, set -e, set -u, jobs, quoting, functions', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  for (const command of CASES) {
    const local = spawnSync('bash', ['-c', command], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const task = await tools.ok('run', { command, wait_seconds: 30 });
    assert.deepEqual(
      [task.exit_code, task.stdout_tail],
      [local.status, local.stdout],
      `as bash -c runs it: ${command}`,
    );
  }
});

test("a task's pkill -f of a word in its own command does not end its own shell, and no process shows the command", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const word = `own-${randomUUID().slice(0, 8)}`;
  const command = `pgrep -f ${word} || echo "no process shows ${word}"; pkill -f ${word}; echo "pkill: $?"; echo survived`;
  const task = await tools.ok('run', { command, wait_seconds: 30 });
  assert.equal(task.stdout_tail, `no process shows ${word}\npkill: 1\nsurvived\n`);
});
