// pty tasks, stdin text and the input tool, on real terminals and pipes, and the environment that
// keeps a task from waiting on a pager or a prompt.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

/** Polls status until the task's stdout contains `text`; returns that view. */
async function waitForOutput(tools: ToolClient, id: string, text: string): Promise<any> {
  let view: any = null;
  const seen = await waitFor(
    async () => {
      view = await tools.ok('status', { id });
      return view.stdout_tail.includes(text);
    },
    10_000,
    50,
  );
  assert.ok(seen, `stdout of ${id} never showed ${JSON.stringify(text)}: ${JSON.stringify(view?.stdout_tail)}`);
  return view;
}

test('a pty task runs on a terminal of the asked size with TERM set; without pty there is none', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const probe =
    '[ -t 0 ] && [ -t 1 ] && echo on-a-terminal || echo no-terminal; tty; stty size; echo "TERM=$TERM"; echo oops >&2';
  const onPty = await tools.ok('run', { command: probe, pty: true, wait_seconds: 10 });
  assert.equal(onPty.state, 'done');
  assert.equal(onPty.exit_code, 0);
  assert.equal(onPty.pty, true);
  assert.equal(onPty.interactive, false);
  const lines = onPty.stdout_tail.split('\r\n');
  assert.equal(lines[0], 'on-a-terminal');
  assert.match(lines[1], /^\/dev\/pts\/\d+$/);
  assert.equal(lines[2], '40 120');
  assert.equal(lines[3], 'TERM=xterm-256color');
  assert.equal(lines[4], 'oops', 'stderr goes to the terminal too');
  assert.equal(onPty.stderr_bytes, 0);

  const sized = await tools.ok('run', { command: 'stty size', pty: true, cols: 80, rows: 24, wait_seconds: 10 });
  assert.equal(sized.stdout_tail, '24 80\r\n');

  const onPipes = await tools.ok('run', { command: probe, wait_seconds: 10 });
  assert.equal(onPipes.pty, false);
  assert.match(onPipes.stdout_tail, /^no-terminal\nnot a tty\n/);
  assert.equal(onPipes.stderr_tail.trim().split('\n').at(-1), 'oops');
});

test('stdin text reaches cat, which ends; without it a prompt reads end-of-file at once', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const piped = await tools.ok('run', { command: 'cat', stdin: 'hello\nworld', wait_seconds: 10 });
  assert.equal(piped.state, 'done');
  assert.equal(piped.stdout_tail, 'hello\nworld');
  // On a terminal the text is typed: the terminal echoes it, then cat prints it, then Ctrl-D ends it.
  const typed = await tools.ok('run', { command: 'cat', stdin: 'hello\n', pty: true, wait_seconds: 10 });
  assert.equal(typed.state, 'done');
  assert.equal(typed.exit_code, 0);
  assert.equal(typed.stdout_tail, 'hello\r\nhello\r\n');
  for (const pty of [false, true]) {
    const asked = await tools.ok('run', {
      command: 'read -r -p "continue? " answer; echo "read=$? [$answer]"',
      pty,
      wait_seconds: 10,
    });
    assert.equal(asked.state, 'done', `pty ${pty}: a prompt with nobody to answer must not wait`);
    assert.match(asked.stdout_tail, /read=1 \[\]/);
  }
});

for (const pty of [false, true]) {
  test(`a two-question script is answered through input${pty ? ' on a pty' : ''}, the second with eof`, async (t) => {
    const daemon = await startTestDaemon(t);
    const tools = await connectClient(t, daemon.url);
    const script =
      'printf "name? "; read -r name; echo "hello $name"; printf "colour? "; read -r colour; echo "likes $colour"; cat; echo "end of input"';
    const task = await tools.ok('run', { command: script, pty, interactive: true, wait_seconds: 0 });
    assert.equal(task.interactive, true);
    await waitForOutput(tools, task.id, 'name? ');
    const first = await tools.ok('input', { id: task.id, text: 'Ada\n' });
    assert.deepEqual([first.bytes_written, first.pending_bytes, first.stdin_open], [4, 0, true]);
    const asked = await waitForOutput(tools, task.id, 'colour? ');
    assert.match(asked.stdout_tail, /hello Ada/);
    assert.equal(asked.state, 'running');
    assert.equal(asked.stdin_open, true);
    const second = await tools.ok('input', { id: task.id, text: 'green\n', eof: true });
    assert.equal(second.stdin_open, false);
    const done = await tools.ok('status', { id: task.id, wait_seconds: 10 });
    assert.equal(done.state, 'done');
    assert.equal(done.exit_code, 0);
    assert.match(done.stdout_tail, /likes green\r?\nend of input/);
    assert.equal(done.stdin_open, false);
    const late = await tools.error('input', { id: task.id, text: 'more\n' });
    assert.match(
      late,
      new RegExp(`input to task "${task.id}" refused: it has ended \\(done\\), so its stdin is closed`),
    );
  });
}

test('input is refused, with the reason, for a task that is not interactive, closed, pending or unknown', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-running', '1'] });
  const tools = await connectClient(t, daemon.url);
  const plain = await tools.ok('run', { command: 'sleep 30', wait_seconds: 0 });
  assert.match(
    await tools.error('input', { id: plain.id, text: 'x' }),
    /refused: it was not started with interactive: true/,
  );
  assert.match(await tools.error('input', { id: 'no-such-task', text: 'x' }), /"id" names no task: got "no-such-task"/);
  const queued = await tools.ok('run', { command: 'cat', interactive: true, wait_seconds: 0 });
  assert.equal(queued.state, 'pending');
  assert.match(
    await tools.error('input', { id: queued.id, text: 'x' }),
    /refused: it is still pending \(waiting for a free slot\)/,
  );
  await tools.ok('kill', { id: plain.id, force: true });
  await waitFor(async () => (await tools.ok('status', { id: queued.id })).state === 'running');
  const closed = await tools.ok('input', { id: queued.id, text: '', eof: true });
  assert.equal(closed.stdin_open, false);
  assert.match(
    await tools.error('input', { id: queued.id, text: 'x' }),
    /refused: (its stdin was closed by an earlier input with eof: true|it has ended)/,
  );
  assert.equal((await tools.ok('status', { id: queued.id, wait_seconds: 10 })).state, 'done');
  assert.match(await tools.error('input', { id: queued.id }), /"text" is required: a string of at most 1048576 bytes/);
});

test('input to a task that does not read says how much is still pending, after about a second', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'sleep 30', interactive: true, wait_seconds: 0 });
  const text = 'x'.repeat(512 * 1024); // beyond a pipe's 64 KiB
  const before = Date.now();
  const answer = await tools.ok('input', { id: task.id, text });
  assert.equal(answer.bytes_written, text.length);
  assert.ok(answer.pending_bytes > 0 && answer.pending_bytes < text.length, `pending ${answer.pending_bytes}`);
  assert.ok(Date.now() - before >= 900, 'the answer waited for the task to read');
  await tools.ok('kill', { id: task.id, force: true });
  const killed = await tools.ok('status', { id: task.id, wait_seconds: 10 });
  assert.equal(killed.state, 'killed', JSON.stringify(killed));
});

test('input to a pty task that does not read stays pending, and the task can still be killed', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'sleep 30', pty: true, interactive: true, wait_seconds: 0 });
  const text = `${'y'.repeat(99)}\n`.repeat(2000); // 200 KB: far more than a terminal's input buffer
  const answer = await tools.ok('input', { id: task.id, text });
  assert.ok(answer.pending_bytes > 0 && answer.pending_bytes < text.length, `pending ${answer.pending_bytes}`);
  // The worker thread is free: another task on it runs, and the kill lands.
  assert.equal(
    (await tools.ok('run', { command: 'echo still serving', wait_seconds: 10 })).stdout_tail,
    'still serving\n',
  );
  await tools.ok('kill', { id: task.id, force: true });
  assert.equal((await tools.ok('status', { id: task.id, wait_seconds: 10 })).state, 'killed');
  // stdin text beyond the buffer, for a task that never reads it, does not hold the task either.
  const ignoring = await tools.ok('run', { command: 'true', pty: true, stdin: text, wait_seconds: 10 });
  assert.equal(ignoring.state, 'done');
});

test('a pty task that is not interactive reads end of file at every prompt, even one that flushes input', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const asks = await tools.ok('run', {
    command: 'read -r a; read -r b; read -r c; echo "asked three times"',
    pty: true,
    wait_seconds: 10,
    timeout_seconds: 20,
  });
  assert.equal(asks.state, 'done');
  assert.match(asks.stdout_tail, /asked three times/);
  // A password prompt turns echo off with TCSAFLUSH, which throws away input typed before it.
  const flush =
    'import termios, sys; fd = 0; m = termios.tcgetattr(fd); m[3] &= ~termios.ECHO; termios.tcsetattr(fd, termios.TCSAFLUSH, m); print("got", repr(sys.stdin.readline()))';
  const secret = await tools.ok('run', {
    command: `python3 -c '${flush}'`,
    pty: true,
    wait_seconds: 10,
    timeout_seconds: 20,
  });
  assert.equal(secret.state, 'done', JSON.stringify(secret.stdout_tail));
  assert.match(secret.stdout_tail, /got ''/);
});

test('no task inherits the terminal of another', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const holder = await tools.ok('run', { command: 'sleep 30', pty: true, wait_seconds: 0 });
  await tools.ok('run', { command: 'true', pty: true, wait_seconds: 10 });
  const countMasters =
    'n=0; for fd in /proc/$$/fd/*; do [ "$(readlink "$fd")" = /dev/ptmx ] && n=$((n+1)); done; echo "masters=$n"';
  assert.equal((await tools.ok('run', { command: countMasters, wait_seconds: 10 })).stdout_tail, 'masters=0\n');
  assert.match(
    (await tools.ok('run', { command: countMasters, pty: true, wait_seconds: 10 })).stdout_tail,
    /^masters=0\r\n$/,
  );
  await tools.ok('kill', { id: holder.id, force: true });
});

test('pagers and prompts are off by default, and env overrides them', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const show = 'echo "$PAGER|$GIT_PAGER|$MANPAGER|$GIT_TERMINAL_PROMPT|$GIT_EDITOR|$DEBIAN_FRONTEND"';
  assert.equal(
    (await tools.ok('run', { command: show, wait_seconds: 10 })).stdout_tail,
    'cat|cat|cat|0|true|noninteractive\n',
  );
  assert.equal(
    (await tools.ok('run', { command: show, env: { PAGER: 'less', GIT_TERMINAL_PROMPT: '1' }, wait_seconds: 10 }))
      .stdout_tail,
    'less|cat|cat|1|true|noninteractive\n',
  );
  // Someone at the keyboard (interactive) may answer a prompt: only the pagers stay off.
  // (What the daemon itself inherited, e.g. DEBIAN_FRONTEND in this container, passes through.)
  const inherited = ['GIT_TERMINAL_PROMPT', 'GIT_EDITOR', 'DEBIAN_FRONTEND']
    .map((name) => process.env[name] ?? '')
    .join('|');
  const interactive = await tools.ok('run', { command: show, interactive: true, wait_seconds: 10 });
  assert.equal(interactive.stdout_tail, `cat|cat|cat|${inherited}\n`);
});

test('git log on a pty with many commits finishes without a pager', async (t) => {
  const repo = mkdtempSync(join(tmpdir(), 'hive-bash-git-'));
  t.after(() => rmSync(repo, { recursive: true, force: true }));
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', repo, ...args], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@example.invalid',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@example.invalid',
      },
    });
  git('init', '-q');
  // 400 commits through fast-import: far more than the terminal's 40 rows.
  const stream = Array.from(
    { length: 400 },
    (_, i) =>
      `commit refs/heads/main\ncommitter t <t@example.invalid> ${1_700_000_000 + i} +0000\ndata ${`commit ${i}`.length}\ncommit ${i}\n`,
  ).join('');
  execFileSync('git', ['-C', repo, 'fast-import', '--quiet'], { input: stream });
  git('symbolic-ref', 'HEAD', 'refs/heads/main');
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const log = await tools.ok('run', {
    command: 'git log --no-color',
    cwd: repo,
    pty: true,
    wait_seconds: 20,
    timeout_seconds: 60,
  });
  assert.equal(log.state, 'done', `git log waited on a pager: ${JSON.stringify(log)}`);
  assert.equal(log.exit_code, 0);
  assert.match(log.stdout_tail, /commit 0\r\n$/);
  assert.equal(readFileSync(log.stdout_path, 'utf8').match(/^commit [0-9a-f]{40}/gm)?.length, 400);
});

test('50 pty tasks at once all finish with their own output', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const count = 50;
  const figures = () => {
    const status = readFileSync(`/proc/${daemon.child.pid}/status`, 'utf8');
    return `${/VmRSS:\s+(\d+ kB)/.exec(status)?.[1]} RSS, ${/Threads:\s+(\d+)/.exec(status)?.[1]} threads`;
  };
  const idle = figures();
  const barrier = join(daemon.scratch, 'go');
  // Each waits for the barrier file, so all 50 hold a terminal at the same time.
  const tasks = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      tools.ok('run', {
        command: `until [ -e ${barrier} ]; do sleep 0.05; done; [ -t 1 ] && echo "task ${i} on $(tty)"`,
        pty: true,
        wait_seconds: 0,
        timeout_seconds: 120,
      }),
    ),
  );
  const allRunning = await waitFor(
    async () => (await tools.ok('list', { state: 'running', limit: 100 })).tasks.length === count,
    30_000,
    100,
  );
  assert.ok(allRunning, 'all 50 ran at once');
  t.diagnostic(`daemon before: ${idle}; with ${count} pty tasks running: ${figures()}`);
  execFileSync('touch', [barrier]);
  const terminals = new Set<string>();
  for (const [i, task] of tasks.entries()) {
    const done = await tools.ok('status', { id: task.id, wait_seconds: 30 });
    assert.equal(done.state, 'done', `task ${i}`);
    assert.equal(done.exit_code, 0, `task ${i}`);
    const match = new RegExp(`^task ${i} on (/dev/pts/\\d+)\\r\\n$`).exec(done.stdout_tail);
    assert.ok(match, `task ${i} printed ${JSON.stringify(done.stdout_tail)}`);
    terminals.add(match[1]!);
  }
  assert.equal(terminals.size, count, 'each task had a terminal of its own');
});

test('pty output reaches its file whole, to the last byte, however fast the task ends', async (t) => {
  // Linux drops what the master has not read when the slave's last fd closes: the daemon must
  // read to the end before it lets the terminal go. Ten at once, so the reader lags.
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const expected = Array.from({ length: 20_000 }, (_, i) => `${i + 1}\r\n`).join('');
  const tasks = await Promise.all(
    Array.from({ length: 10 }, () => tools.ok('run', { command: 'seq 1 20000', pty: true, wait_seconds: 0 })),
  );
  for (const task of tasks) {
    const done = await tools.ok('status', { id: task.id, wait_seconds: 30 });
    assert.equal(done.state, 'done');
    assert.equal(done.stdout_bytes, expected.length);
    assert.ok(readFileSync(done.stdout_path, 'utf8') === expected, `${task.id}: the output differs from seq's`);
  }
});

test('the output cap applies to pty output', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-output-bytes', '1000'] });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', {
    command: 'head -c 200000 /dev/zero | tr "\\0" x; echo; echo finished',
    pty: true,
    wait_seconds: 20,
  });
  assert.equal(task.state, 'done');
  assert.equal(task.exit_code, 0);
  assert.equal(task.stdout_bytes, 1000);
  assert.equal(task.stdout_truncated, true);
  assert.equal(readFileSync(task.stdout_path, 'utf8'), 'x'.repeat(1000));
});

test('bad pty and input fields are refused with the field, the value and what is accepted', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  assert.match(
    await tools.error('run', { command: 'true', cols: 80 }),
    /"cols" sets the size of a terminal and is taken only with pty: true; got 80 \(number\) with pty nothing/,
  );
  assert.match(
    await tools.error('run', { command: 'true', pty: true, rows: 0 }),
    /"rows" must be an integer from 1 to 1000, given only with pty: true; got 0 \(number\)/,
  );
  assert.match(
    await tools.error('run', { command: 'true', pty: 'yes' }),
    /"pty" must be true or false; got "yes" \(string\)/,
  );
  assert.match(
    await tools.error('run', { command: 'true', interactive: 1 }),
    /"interactive" must be true or false; got 1 \(number\)/,
  );
  assert.match(
    await tools.error('run', { command: 'cat', stdin: 'x'.repeat(1024 * 1024 + 1) }),
    /"stdin" must be a string of at most 1048576 bytes with no lone surrogate; got "x{60}"\.\.\. \(string of 1048577 characters\)/,
  );
  assert.match(
    await tools.error('input', { id: 'a', text: 5 }),
    /"text" must be a string of at most 1048576 bytes with no lone surrogate; got 5 \(number\)/,
  );
  assert.match(
    await tools.error('input', { id: 'a', text: 'x', eof: 'no' }),
    /"eof" must be true or false; got "no" \(string\)/,
  );
});
