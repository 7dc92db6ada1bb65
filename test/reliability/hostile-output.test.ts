// What a careless or hostile task prints cannot crash or stall the daemon, and grep finds what
// JavaScript's RegExp finds, each on a daemon of its own. The stall cases
// prove by order that /healthz keeps answering while the costly call is in flight (answers that
// came back before the call's own), and report the latencies measured, never assert them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { healthz, processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { COSTLY_GREP, healthzBaseline, latencyFigures, servedMeanwhile } from '../helpers/stall.js';
import { grepPattern, linesAround } from './fuzz/patterns.js';
import { DAEMON_ARGS, params } from './fuzz/runs.js';

test('a pty task moving its cursor a billion columns: its text is read, and read again after a restart on the same state dir', async (t) => {
  const first = await startTestDaemon(t);
  const tools = await connectClient(t, first.url);
  const command = 'printf "A\\033[1000000000CB\\n"; printf "\\033[2000000000GE\\n"';
  const run = await tools.ok('run', { command, pty: true, cols: 80, name: 'far', wait_seconds: 10 });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);
  const expected = `A${' '.repeat(78)}B\n${' '.repeat(79)}E\n`;
  const read = await tools.ok('output', { id: 'far' });
  assert.equal(read.stdout.text, expected, 'B and E land on the last of the 80 columns');
  assert.equal((await tools.ok('output', { id: 'far', tail: 1 })).stdout.text, expected.split('\n')[1] + '\n');
  assert.equal((await tools.ok('output', { id: 'far', grep: 'B$' })).stdout.text, `1:${expected.split('\n')[0]}\n`);
  assert.equal((await healthz(first.origin)).ok, true);

  assert.equal(await first.stop(), 0, 'the daemon stops cleanly');
  const second = await startTestDaemon(t, { stateDir: first.stateDir });
  const again = await connectClient(t, second.url);
  assert.equal((await again.ok('output', { id: 'far', tail: 1 })).stdout.text, expected.split('\n')[1] + '\n');
  assert.equal((await again.ok('output', { id: 'far' })).stdout.text, expected);
  assert.equal((await again.ok('status', { id: 'far' })).state, 'done');
  assert.equal((await healthz(second.origin)).ok, true);
  report(t, { case: 1, text_bytes: Buffer.byteLength(expected) });
});

/** The lines `grep` answered, as numbers and texts from its "N:line" form. */
function grepAnswer(text: string): Array<[number, string]> {
  return text
    .split('\n')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^(\d+):(.*)$/s.exec(entry);
      assert.ok(match, `a grep line without its number: ${JSON.stringify(entry)}`);
      return [Number(match[1]), match[2]!];
    });
}

test("grep finds every line JavaScript's RegExp matches, and no other (fixed patterns, then random ones)", async (t) => {
  const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
  const tools = await connectClient(t, daemon.url);
  const lines = ['server at 10.0.0.12 up', 'version 3.14 out', 'xx marks', 'ABCD here', 'nothing', 'x once'];
  await tools.ok('run', { command: 'cat', stdin: `${lines.join('\n')}\n`, name: 'known', wait_seconds: 10 });
  for (const [pattern, expected] of [
    ['[0-9]{1,3}\\.[0-9]{1,3}', [1, 2]],
    ['\\d{1,3}\\.\\d+', [1, 2]],
    ['x{2,10}', [3]],
    ['\\x41BCD', [4]],
    ['\\u0041BCD', [4]],
    // The end of the file after its last newline is no line: an empty-line pattern finds none here.
    ['^$', []],
  ] as const) {
    const found = await tools.ok('output', { id: 'known', grep: pattern });
    assert.deepEqual(
      grepAnswer(found.stdout.text),
      expected.map((number) => [number, lines[number - 1]]),
      `grep ${pattern}`,
    );
  }

  let compared = 0;
  let matched = 0;
  await fc.assert(
    fc.asyncProperty(
      grepPattern.chain(({ source, sample }) => linesAround(sample).map((written) => ({ source, written }))),
      async ({ source, written }) => {
        await tools.ok('run', { command: 'cat', stdin: `${written.join('\n')}\n`, name: 'lines', wait_seconds: 10 });
        const answer = await tools.call('output', { id: 'lines', stream: 'stdout', grep: source });
        if (answer.isError) {
          // Refused only as V8's linear engine refuses it (this process runs without its flag to ask).
          assert.equal(answer.structured?.error?.code, 'ERR_INVALID_INPUT', `grep /${source}/: ${answer.text}`);
          assert.match(answer.text, /"grep" must be a regular expression that runs in linear time/);
          return;
        }
        const pattern = new RegExp(source);
        // A line is shown (and matched) without the "\r" a CRLF file ends it with.
        const shown = written.map((text) => text.replace(/\r$/, ''));
        const expected = shown.flatMap((text, index): Array<[number, string]> =>
          pattern.test(text) ? [[index + 1, text]] : [],
        );
        assert.deepEqual(
          grepAnswer(answer.structured.stdout.text),
          expected,
          `grep /${source}/ over ${JSON.stringify(written)}`,
        );
        compared += written.length;
        matched += expected.length;
      },
    ),
    params(60),
  );
  report(t, { case: 4, lines_compared: compared, lines_matched: matched });
});

test('a pattern of nested quantifiers, as grep and as wait_for, is stopped at its budget and refused, off the main thread: /healthz answers all the while', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const { command, pattern } = COSTLY_GREP;
  assert.equal((await tools.ok('run', { command, name: 'aaa', wait_seconds: 30 })).stdout_bytes, 400 * 2002);
  const baseline = latencyFigures(await healthzBaseline(daemon.origin));
  const refusal = (tool: string, field: string, consequence: string) =>
    `Invalid ${tool} input: "${field}" took too long to match: "${pattern.slice(0, 60)}"... (string of 977 characters) ran past its budget of 3602 ms (2 s, and 2 µs for each of the 800800 bytes to read), so it was stopped; ${consequence}. ` +
    'Accepted: a pattern V8 matches within that budget, as it does literals, classes and a few quantifiers; groups with quantifiers nested in quantifiers, such as (?:a+)+ repeated, are not';

  const grep = await servedMeanwhile(daemon.origin, 'grep', () => tools.call('output', { id: 'aaa', grep: pattern }));
  assert.equal(grep.value.structured.error.code, 'ERR_PATTERN_TOO_COSTLY');
  assert.equal(
    grep.value.text,
    refusal('output', 'grep', 'nothing was read: call output without grep, or grep a simpler pattern'),
  );
  const wait = await servedMeanwhile(daemon.origin, 'wait_for', () =>
    tools.call('status', { id: 'aaa', wait_for: pattern, wait_seconds: 30 }),
  );
  assert.equal(wait.value.structured.error.code, 'ERR_PATTERN_TOO_COSTLY');
  assert.equal(
    wait.value.text,
    refusal('status', 'wait_for', 'the wait was given up (the task goes on: status without wait_for shows it)'),
  );
  const simple = await tools.ok('output', { id: 'aaa', grep: 'a{3}b$', head: 1 });
  assert.equal(simple.stdout.text, `1:${'a'.repeat(2000)}b\n`, 'an ordinary pattern is matched as before');
  report(t, {
    case: 3,
    healthz_idle_ms: baseline,
    grep: grep.figures,
    wait_for: wait.figures,
  });
});

test('screens of a 1000x1000 terminal flooded with ESC[2J and of counts of two billion: each call feeds for its budget at most, /healthz answers all the while, and eight such terminals are not all kept', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const big = { pty: true, cols: 1000, rows: 1000, wait_seconds: 20 };
  const flood = "for i in $(seq 256); do printf '\\033[2J'; done; printf drawn";
  await tools.ok('run', { command: flood, name: 'flood', ...big });
  const calls: Array<Record<string, unknown>> = [];
  let screen: any = null;
  let drawn = -1;
  while (screen === null) {
    const { value, figures } = await servedMeanwhile(daemon.origin, 'screen', () =>
      tools.call('output', { id: 'flood', screen: true }),
    );
    calls.push(figures);
    if (!value.isError) screen = value.structured.screen;
    else {
      assert.equal(value.structured.error.code, 'ERR_SCREEN_TOO_COSTLY', value.text);
      const fed = Number(/was fed (\d+) of the 1029 bytes written/.exec(value.text)?.[1]);
      assert.ok(fed > drawn, `each call draws on: ${value.text}`);
      drawn = fed;
    }
  }
  assert.deepEqual([screen.text.split('\n')[0], screen.rows, screen.cols], ['drawn', 1000, 1000]);

  // Counts of two billion, which xterm.js looped over: scroll, tab, insert lines, repeat a character.
  const counts = "printf 'top\\033[2147483647S\\033[1;1Ha\\033[2147483647Ib\\r\\n\\033[2147483647Lc\\033[2147483647b'";
  await tools.ok('run', { command: counts, pty: true, cols: 20, rows: 5, name: 'counts', wait_seconds: 20 });
  const counted = (await tools.ok('output', { id: 'counts', screen: true })).screen;
  // 256 c's scroll the 20x5 screen: the last row holds 16 of them.
  assert.deepEqual(counted.text.split('\n'), [...Array(4).fill('c'.repeat(20)), 'c'.repeat(16)]);
  assert.equal((await tools.ok('output', { id: 'counts' })).stdout.text, 'topab\nc');

  const rssBefore = processFigures(daemon.child.pid!).rssKb;
  for (let i = 0; i < 8; i++) {
    await tools.ok('run', { command: "printf '\\033[2Jscreen'", name: `big-${i}`, ...big });
    assert.equal((await tools.ok('output', { id: `big-${i}`, screen: true })).screen.text.split('\n')[0], 'screen');
  }
  const grownMb = (processFigures(daemon.child.pid!).rssKb - rssBefore) / 1024;
  // Eight kept would take 200 MB (25 MB a terminal); a million cells are kept in all, one of these.
  assert.ok(grownMb < 125, `eight 1000x1000 screens took ${grownMb} MB more`);
  report(t, { case: 2, flood_calls: calls, eight_screens_mb: Math.round(grownMb) });
});

test('screens of a pty task that opens an OSC or a DCS string and prints 60 MB into it: the body is skipped a read at a time, /healthz answers all the while', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const calls: Record<string, unknown> = {};
  for (const [name, opener] of [
    ['osc', '\\033]0;'],
    ['dcs', '\\033P'],
  ]) {
    const command = `printf '${opener}'; head -c 60000000 /dev/zero | tr '\\0' A; printf '\\033\\\\shown'`;
    let task = await tools.ok('run', { command, name: name!, pty: true, cols: 80, rows: 24, wait_seconds: 30 });
    while (task.state === 'running') task = await tools.ok('status', { id: name!, wait_seconds: 30 });
    assert.equal(task.state, 'done');
    let screen: any = null;
    const figures: Array<Record<string, unknown>> = [];
    while (screen === null) {
      const called = await servedMeanwhile(daemon.origin, `the ${name} screen`, () =>
        tools.call('output', { id: name!, screen: true }),
      );
      figures.push(called.figures);
      if (!called.value.isError) screen = called.value.structured.screen;
      else assert.equal(called.value.structured.error.code, 'ERR_SCREEN_TOO_COSTLY', called.value.text);
    }
    assert.equal(screen.text.split('\n')[0], 'shown', `the text after the ${name} string is drawn`);
    calls[name!] = figures;
  }
  report(t, { case: 11, screen_calls: calls });
});

test("two greps running to their budget hold one reader thread, not both: another task's plain output is answered before either", async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  // As in case 3: no line matches, and each grep runs to its budget (about 3.6 s).
  const { command, pattern } = COSTLY_GREP;
  await tools.ok('run', { command, name: 'aaa', wait_seconds: 30 });
  await tools.ok('run', { command: 'echo small', name: 'small', wait_seconds: 30 });
  let greps = 0;
  const grep = () => tools.call('output', { id: 'aaa', grep: pattern }).finally(() => greps++);
  const both = Promise.all([grep(), grep()]);
  // A call without the reader threads, answered after both greps reached the daemon.
  await tools.ok('status', { id: 'aaa' });
  const plain = await tools.ok('output', { id: 'small', tail: 1 });
  const gotBeforeGreps = greps;
  assert.equal(plain.stdout.text, 'small\n');
  for (const refused of await both)
    assert.equal(refused.isError && refused.structured.error.code, 'ERR_PATTERN_TOO_COSTLY', refused.text);
  assert.equal(gotBeforeGreps, 0, 'the plain output came back before either grep');
  report(t, { case: 12, greps_done_before_plain_output: gotBeforeGreps });
});
