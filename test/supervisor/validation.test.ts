import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test('every bad input gets an error that names the field, echoes the value and says what is accepted', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const cases: Array<[string, Record<string, unknown>, string]> = [
    [
      'run',
      { command: '' },
      'Invalid run input: "command" must be a non-empty string of at most 262144 bytes with no NUL character or lone surrogate; got "" (string)',
    ],
    [
      'run',
      { command: 'echo a\0b' },
      'Invalid run input: "command" must be a non-empty string of at most 262144 bytes with no NUL character or lone surrogate; got "echo a\\u0000b" (string)',
    ],
    [
      'run',
      {},
      'Invalid run input: "command" is required: a non-empty string of at most 262144 bytes with no NUL character or lone surrogate',
    ],
    [
      'run',
      { command: 42 },
      'Invalid run input: "command" must be a non-empty string of at most 262144 bytes with no NUL character or lone surrogate; got 42 (number)',
    ],
    [
      'run',
      { command: 'true', name: '../x' },
      'Invalid run input: "name" must be 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit; got "../x" (string)',
    ],
    [
      'run',
      { command: 'true', name: 'a/b' },
      'Invalid run input: "name" must be 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit; got "a/b" (string)',
    ],
    [
      'run',
      { command: 'true', name: 'x'.repeat(100) },
      `Invalid run input: "name" must be 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit; got "${'x'.repeat(60)}"... (string of 100 characters)`,
    ],
    [
      'run',
      { command: 'true', wait_seconds: 31 },
      'Invalid run input: "wait_seconds" must be a number of seconds from 0 to 30; got 31 (number)',
    ],
    [
      'run',
      { command: 'true', wait_seconds: -1 },
      'Invalid run input: "wait_seconds" must be a number of seconds from 0 to 30; got -1 (number)',
    ],
    [
      'run',
      { command: 'true', timeout_seconds: 0 },
      'Invalid run input: "timeout_seconds" must be a positive number of seconds (at most one year); got 0 (number)',
    ],
    [
      'run',
      { command: 'true', cwd: '/no/such/dir' },
      'Invalid run input: "cwd" must be the path of an existing directory; got "/no/such/dir" (string): no such directory',
    ],
    [
      'run',
      { command: 'true', cwd: '/etc/passwd' },
      'Invalid run input: "cwd" must be the path of an existing directory; got "/etc/passwd" (string): not a directory',
    ],
    [
      'run',
      { command: 'true', env: { 'A=B': 'x' } },
      'Invalid run input: "env" must be an object of at most 4096 variables (1048576 bytes in all and 131072 each, as an exec takes them: NAME=VALUE and a NUL) mapping names (letters, digits and _, not starting with a digit) to string values without NUL or lone surrogates; got {"A=B":"x"} (object) (its member "A=B" is not a name it accepts)',
    ],
    [
      'run',
      { command: 'true', env: { A: 1 } },
      'Invalid run input: "env" must be an object of at most 4096 variables (1048576 bytes in all and 131072 each, as an exec takes them: NAME=VALUE and a NUL) mapping names (letters, digits and _, not starting with a digit) to string values without NUL or lone surrogates; got {"A":1} (object) (its member "A" is 1 (number))',
    ],
    [
      'run',
      { command: 'true', timeout: 5 },
      'Invalid run input: unknown field "timeout"; run accepts: command, name, wait_seconds, timeout_seconds, cwd, env, stdin, pty, cols, rows, interactive, memory_limit_mb, max_processes, cpu_limit, sandbox, wait_for, wait_for_port, exclusive_port, verbose',
    ],
    ['status', { id: 'nope' }, '"id" names no task: got "nope"; call list to see the ids of known tasks'],
    [
      'status',
      { id: '../etc/passwd' },
      'Invalid status input: "id" must be a task id: 1 to 64 characters of letters, digits, ".", "_" and "-", starting with a letter or digit; got "../etc/passwd" (string)',
    ],
    [
      'status',
      { id: 'x', tail_bytes: 70000 },
      'Invalid status input: "tail_bytes" must be an integer from 0 to 65536; got 70000 (number)',
    ],
    ['kill', { id: 'nope' }, '"id" names no task: got "nope"; call list to see the ids of known tasks'],
    [
      'kill',
      { id: 'x', signal: 'SIGSTOP' },
      'Invalid kill input: "signal" must be one of SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGKILL; got "SIGSTOP" (string)',
    ],
    [
      'list',
      { state: 'finished' },
      'Invalid list input: "state" must be one of pending, running, done, timed_out, killed, interrupted; got "finished" (string)',
    ],
    ['list', { limit: 0 }, 'Invalid list input: "limit" must be an integer from 1 to 1000; got 0 (number)'],
    ['input', { id: 'nope', text: 'y\n' }, '"id" names no task: got "nope"; call list to see the ids of known tasks'],
    [
      'input',
      { id: 'x', text: 'y', end: true },
      'Invalid input input: unknown field "end"; input accepts: id, text, eof',
    ],
  ];
  for (const [tool, args, message] of cases) {
    assert.equal(await tools.error(tool, args), message, `${tool} ${JSON.stringify(args).slice(0, 60)}`);
  }
  // The member at fault is named where the echo of its object is cut before it (the 101st variable).
  const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`VAR_${i}`, 'value']));
  assert.match(
    await tools.error('run', { command: 'true', env: { ...many, 'BAD-KEY': 'x' } }),
    /; got \{"VAR_0":.*\.\.\. \(object\) \(its member "BAD-KEY" is not a name it accepts\)$/,
  );
  assert.match(
    await tools.error('run', { command: 'true', env: { ...many, LAST: 'a\0b' } }),
    /\(its member "LAST" is "a\\u0000b" \(string\)\)$/,
  );
  // A lone surrogate (a JSON string may hold one) would reach the task as U+FFFD: refused where it is.
  assert.match(
    await tools.error('run', { command: 'echo \ud800' }),
    /"command" must be .* or lone surrogate; got "echo \\ud800" \(string\)$/,
  );
  assert.match(
    await tools.error('run', { command: 'true', env: { A: 'x\udc00' } }),
    /\(its member "A" is "x\\udc00" \(string\)\)$/,
  );
  assert.match(
    await tools.error('run', { command: 'cat', stdin: '\ud83d' }),
    /"stdin" must be a string of at most 1048576 bytes with no lone surrogate; got "\\ud83d" \(string\)$/,
  );
  const pair = await tools.call('run', { command: 'cat', stdin: '\ud83d\ude00' });
  assert.equal(pair.structured?.stdout_tail, '\ud83d\ude00', 'a surrogate pair is one character, taken');
  // One variable longer than the kernel passes to an exec (MAX_ARG_STRLEN) is refused by name: it
  // failed the task's exec with exit 126 before. The largest it passes runs.
  assert.match(
    await tools.error('run', { command: 'true', env: { ...many, HUGE: 'x'.repeat(128 * 1024 - 5) } }),
    /\(its member "HUGE" is "x+"\.\.\. \(string of 131067 characters\)\)$/,
  );
  const largest = await tools.call('run', { command: 'echo ${#HUGE}', env: { HUGE: 'x'.repeat(128 * 1024 - 6) } });
  assert.equal(largest.structured?.exit_code, 0, largest.text);
  assert.match(largest.text, /131066/);
  // A tool that does not exist is a protocol error (-32602), not a tool error: the client's list is stale.
  await assert.rejects(tools.call('launch', {}), (error: { code?: number; message?: string }) => {
    assert.equal(error.code, -32602);
    assert.match(
      error.message ?? '',
      /Invalid params: unknown tool "launch" in params\.name; this server has: run, status, output, kill, list, input/,
    );
    return true;
  });
  // After all of that the daemon still serves.
  const ok = await tools.ok('run', { command: 'echo still here' });
  assert.equal(ok.stdout_tail, 'still here\n');
});

test('every refusal carries a stable code beside its message, in structured content the client validates', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  await tools.ok('run', { command: 'sleep 30', name: 'busy', wait_seconds: 0 });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['run', { command: '' }, 'ERR_INVALID_INPUT'],
    ['status', { id: 'nope' }, 'ERR_UNKNOWN_TASK'],
    ['run', { command: 'true', name: 'busy' }, 'ERR_NAME_BUSY'],
    ['input', { id: 'busy', text: 'y' }, 'ERR_INPUT_NOT_INTERACTIVE'],
  ];
  for (const [tool, args, code] of cases) {
    const result = await tools.call(tool, args);
    assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)}`);
    assert.deepEqual(result.structured, { error: { code, message: result.text } }, `${tool} ${JSON.stringify(args)}`);
  }
  await tools.ok('kill', { id: 'busy', force: true });
});

test('the pending queue refuses new tasks beyond --max-pending', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-running', '1', '--max-pending', '2'] });
  const tools = await connectClient(t, daemon.url);
  for (let i = 0; i < 3; i++) await tools.ok('run', { command: 'sleep 30', wait_seconds: 0 });
  const refused = await tools.error('run', { command: 'echo too many' });
  assert.equal(
    refused,
    'the pending queue is full (2 tasks, --max-pending); nothing was started: wait for tasks to finish or kill some, then call run again',
  );
  const pending = await tools.ok('list', { state: 'pending' });
  assert.equal(pending.tasks.length, 2);
  for (const id of ['task-1', 'task-2', 'task-3']) await tools.ok('kill', { id, force: true });
});
