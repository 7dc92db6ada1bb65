// The output tool against the real daemon and real processes: grep with numbers and context over a
// long log, the byte budget, since/next read to a task's end (each line once), head and tail, and
// every bad field refused by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';

/** Reads task `id` through since/next with waits until it has ended and nothing is left; returns every stdout line read, in order. */
async function readToEnd(tools: ToolClient, id: string, since?: string): Promise<{ lines: string[]; next: string }> {
  const lines: string[] = [];
  let next = since;
  let partial = '';
  for (;;) {
    const answer = await tools.ok('output', {
      id,
      stream: 'stdout',
      wait_seconds: 30,
      max_bytes: 1024 * 1024,
      ...(next === undefined ? {} : { since: next }),
    });
    const text = partial + answer.stdout.text;
    const whole = text.split('\n');
    partial = whole.pop()!;
    lines.push(...whole);
    next = answer.next;
    if (answer.state !== 'running' && answer.stdout.text === '') break;
  }
  if (partial.length > 0) lines.push(partial);
  return { lines, next: next! };
}

test('output, against one daemon', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const log =
    'for i in $(seq 1 10000); do if [ $i -eq 5000 ]; then echo "ERROR boom at $i"; else echo "line $i ok"; fi; done';
  await tools.ok('run', { command: log, name: 'log', wait_seconds: 30 });

  await t.test(
    'grep finds the one error in 10,000 lines with its number and context, as grep -n -C writes them',
    async () => {
      const found = await tools.ok('output', { id: 'log', grep: 'ERROR', context: 2 });
      assert.equal(
        found.stdout.text,
        [
          '4998-line 4998 ok',
          '4999-line 4999 ok',
          '5000:ERROR boom at 5000',
          '5001-line 5001 ok',
          '5002-line 5002 ok',
          '',
        ].join('\n'),
      );
      assert.deepEqual(
        [found.stdout.first_line, found.stdout.last_line, found.stdout.matches, found.stdout.omitted_lines],
        [4998, 5002, 1, 0],
      );
      assert.equal(found.stderr.text, '');
      const alone = await tools.ok('output', { id: 'log', grep: '^ERROR b.om at \\d+$' });
      assert.equal(alone.stdout.text, '5000:ERROR boom at 5000\n');
      const groups = await tools.ok('output', { id: 'log', grep: '^line (10|12|16) ok$', context: 1 });
      assert.equal(
        groups.stdout.text,
        [
          '9-line 9 ok',
          '10:line 10 ok',
          '11-line 11 ok',
          '12:line 12 ok',
          '13-line 13 ok',
          '--',
          '15-line 15 ok',
          '16:line 16 ok',
          '17-line 17 ok',
          '',
        ].join('\n'),
      );
    },
  );

  await t.test('a budget over 10,000 lines keeps the head and the tail and counts what it left out', async () => {
    const cut = await tools.ok('output', { id: 'log', stream: 'stdout', max_bytes: 200 });
    const text: string = cut.stdout.text;
    assert.ok(text.startsWith('line 1 ok\nline 2 ok\n'), text);
    assert.ok(text.endsWith('line 9999 ok\nline 10000 ok\n'), text);
    const match = /\[\.\.\. (\d+) lines \((\d+) bytes\) left out \.\.\.\]/.exec(text);
    assert.ok(match, text);
    const shownLines = text.split('\n').length - 2;
    assert.equal(Number(match[1]), 10_000 - shownLines);
    assert.equal(cut.stdout.omitted_lines, Number(match[1]));
    assert.equal(cut.omitted_bytes, cut.stdout.omitted_bytes);
    assert.ok(Buffer.byteLength(text.replace(match[0], '')) <= 200, `within the budget: ${Buffer.byteLength(text)}`);
    assert.equal(cut.stdout.omitted_bytes + Buffer.byteLength(text.replace(`${match[0]}\n`, '')), cut.stdout.bytes);
  });

  await t.test("grep's left-out bytes are bytes of the file: the lines selected, without their numbers", async () => {
    const cut = await tools.ok('output', { id: 'log', stream: 'stdout', grep: '.', max_bytes: 200 });
    const text: string = cut.stdout.text;
    const note = /\[\.\.\. (\d+) lines \((\d+) bytes\) left out \.\.\.\]\n/.exec(text);
    assert.ok(note, text);
    const shown = text
      .replace(note[0], '')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => Buffer.byteLength(line.replace(/^\d+:/, '')) + 1);
    // Every line matches: what is shown and what is left out make the whole file.
    assert.equal(cut.stdout.omitted_bytes + shown.reduce((sum, bytes) => sum + bytes, 0), cut.stdout.bytes);
  });

  await t.test('head and tail give the first and last lines, and head pages on through next', async () => {
    const head = await tools.ok('output', { id: 'log', stream: 'stdout', head: 3 });
    assert.equal(head.stdout.text, 'line 1 ok\nline 2 ok\nline 3 ok\n');
    const page = await tools.ok('output', { id: 'log', stream: 'stdout', head: 2, since: head.next });
    assert.deepEqual([page.stdout.text, page.stdout.first_line], ['line 4 ok\nline 5 ok\n', 4]);
    const tail = await tools.ok('output', { id: 'log', stream: 'stdout', tail: 2 });
    assert.deepEqual(
      [tail.stdout.text, tail.stdout.first_line, tail.stdout.last_line],
      ['line 9999 ok\nline 10000 ok\n', 9999, 10_000],
    );
    const both = await tools.ok('output', { id: 'log', stream: 'stdout', head: 1, tail: 1 });
    const between = both.stdout.bytes - 'line 1 ok\n'.length - 'line 10000 ok\n'.length;
    assert.equal(both.stdout.text, `line 1 ok\n[... 9998 lines (${between} bytes) left out ...]\nline 10000 ok\n`);
    const firstError = await tools.ok('output', { id: 'log', grep: 'ok$', head: 1 });
    assert.equal(firstError.stdout.text, '1:line 1 ok\n');
    const after = await tools.ok('output', { id: 'log', stream: 'stdout', since: tail.next });
    assert.deepEqual([after.stdout.text, 'first_line' in after.stdout], ['', false]);
  });

  await t.test(
    'a task printing a line every 300 ms is read to its end through since and next, every line once',
    async () => {
      await tools.ok('run', {
        command: 'for i in $(seq 1 12); do echo "tick $i"; sleep 0.3; done',
        name: 'ticks',
        wait_seconds: 0,
      });
      const { lines } = await readToEnd(tools, 'ticks');
      assert.deepEqual(
        lines,
        Array.from({ length: 12 }, (_, i) => `tick ${i + 1}`),
      );
    },
  );

  await t.test('a reused name is read from the start of its new run', async () => {
    const first = await tools.ok('run', { command: 'echo old run', name: 'again', wait_seconds: 10 });
    assert.equal(first.state, 'done');
    const read = await tools.ok('output', { id: 'again' });
    await tools.ok('run', { command: 'echo new run', name: 'again', wait_seconds: 10 });
    const fresh = await tools.ok('output', { id: 'again', since: read.next });
    assert.deepEqual([fresh.restarted, fresh.stdout.text], [true, 'new run\n']);
  });

  await t.test(
    "status's text shows the first lines of a stream longer than its tail, and what lies between",
    async () => {
      const { text } = await tools.call('status', { id: 'log', tail_bytes: 30 });
      const between = 9997 - 5; // lines 6 to 9997: the tail's 30 bytes hold the end of line 9998 and two whole lines
      assert.match(
        text,
        new RegExp(
          `--- stdout \\(last 30 of \\d+ bytes\\): \\S+\\nline 1 ok\\nline 2 ok\\nline 3 ok\\nline 4 ok\\nline 5 ok\\n\\[\\.\\.\\. ${between} lines \\(\\d+ bytes\\) between; the output tool reads them \\.\\.\\.\\]\\n.*\\nline 9999 ok\\nline 10000 ok\\n$`,
        ),
      );
      const short = await tools.call('run', { command: 'echo short', wait_seconds: 10 });
      assert.doesNotMatch(short.text, /between/);
    },
  );

  await t.test(
    'a grep that backtracks without end answers at once: V8 falls back to its linear engine (the launch flags)',
    async () => {
      await tools.ok('run', { command: `printf 'a%.0s' $(seq 30000); echo b`, name: 'aaa', wait_seconds: 30 });
      const hung = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('grep (a+)+$ held the daemon for 20 s')), 20_000).unref(),
      );
      const found = await Promise.race([tools.ok('output', { id: 'aaa', grep: '(a+)+$' }), hung]);
      assert.deepEqual([found.stdout.text, found.stdout.matches], ['', 0], 'no line ends in a');
    },
  );

  await t.test('bad fields are refused, naming the field and saying what is accepted', async () => {
    assert.match(
      await tools.error('output', { id: 'log', grep: '(a)\\1' }),
      /"grep" must be a regular expression that runs in linear time .*got "\(a\)\\\\1"/,
    );
    assert.match(await tools.error('output', { id: 'log', context: 3 }), /"context" is taken only with grep/);
    assert.match(
      await tools.error('output', { id: 'log', grep: 'x', context: 21 }),
      /"context" must be an integer from 0 to 20, given only with grep; got 21/,
    );
    assert.match(
      await tools.error('output', { id: 'log', since: 'not-a-cursor' }),
      /"since" must be the "next" of an earlier output answer, passed back as it was; got "not-a-cursor"/,
    );
    assert.match(
      await tools.error('output', { id: 'log', max_bytes: 0 }),
      /"max_bytes" must be an integer from 1 to 1048576; got 0/,
    );
    assert.match(
      await tools.error('output', { id: 'log', stream: 'all' }),
      /"stream" must be one of stdout, stderr, both; got "all"/,
    );
    assert.match(
      await tools.error('output', { id: 'log', head: 0 }),
      /"head" must be an integer from 1 to 100000; got 0/,
    );
    assert.match(
      await tools.error('output', { id: 'log', screen: true }),
      /"screen" is for a task run with pty: true; task log runs on pipes/,
    );
    assert.match(await tools.error('output', { id: 'nope' }), /no task has the id "nope"|nope/);
  });
});

test('since and next carry on across a daemon restart: every line once, none missed', async (t) => {
  const first = await startTestDaemon(t);
  const tools = await connectClient(t, first.url);
  await tools.ok('run', {
    command: 'i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.3; done',
    name: 'ticks',
    wait_seconds: 0,
  });
  const before: string[] = [];
  let next: string | undefined;
  while (before.length < 4) {
    const answer = await tools.ok('output', {
      id: 'ticks',
      stream: 'stdout',
      wait_seconds: 30,
      ...(next === undefined ? {} : { since: next }),
    });
    before.push(...answer.stdout.text.split('\n').filter((line: string) => line !== ''));
    next = answer.next;
  }
  assert.equal(await first.stop(), 0);
  const second = await startTestDaemon(t, { stateDir: first.stateDir, env: { HIVE_TEST_MARK: first.marker } });
  const again = await connectClient(t, second.url);
  const { lines: after } = await readToEnd(again, 'ticks', next);
  const all = [...before, ...after];
  assert.ok(all.length >= 4, all.join(','));
  assert.deepEqual(
    all,
    Array.from({ length: all.length }, (_, i) => `tick ${i + 1}`),
  );
  const whole = await again.ok('output', { id: 'ticks', stream: 'stdout', max_bytes: 1024 * 1024 });
  assert.equal(whole.stdout.text, all.map((line) => `${line}\n`).join(''), 'the reads together are the file');
  assert.equal((await again.ok('output', { id: 'ticks', since: whole.next })).stdout.text, '');
});
