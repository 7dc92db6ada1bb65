// A line longer than a read's piece (1 MiB) is read in pieces, each shown with the line's number;
// it counts as one line, and matches grep once. Before, each piece counted as a line of its own:
// one 60 MB line made `omitted_lines: 50` and `matches: 52`. `head` takes the whole of its last line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const LONG_BYTES = 20_000_000;

test('a line of 20 MB between two short ones is one line, left out or matched once', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  const run = await tools.ok('run', {
    command: `printf 'first\\n'; head -c ${LONG_BYTES} /dev/zero | tr '\\0' x; printf '\\nlast\\n'`,
    name: 'long-line',
    wait_seconds: 30,
  });
  assert.deepEqual([run.state, run.exit_code], ['done', 0]);

  const all = await tools.ok('output', { id: 'long-line', max_bytes: 4096 });
  assert.equal(all.stdout.text.split('\n')[0], 'first');
  assert.ok(all.stdout.text.endsWith('last\n'), all.stdout.text.slice(-100));
  assert.deepEqual(
    [all.stdout.first_line, all.stdout.last_line, all.stdout.omitted_lines],
    [1, 3, 1],
    'the long line is the one line left out',
  );

  const grep = await tools.ok('output', { id: 'long-line', grep: 'x', max_bytes: 4096 });
  assert.equal(grep.stdout.matches, 1, 'the long line matches once');
  assert.deepEqual([grep.stdout.first_line, grep.stdout.last_line], [2, 2]);

  // Before, head stopped at the long line's first piece: its end never shown, 19 MB of it never counted.
  const head = await tools.ok('output', { id: 'long-line', head: 2, max_bytes: 4096 });
  assert.deepEqual([head.stdout.first_line, head.stdout.last_line], [1, 2]);
  const shown = head.stdout.text.replace(/\[\.\.\. .* left out \.\.\.\]\n/, '');
  assert.ok(shown.startsWith('first\nx') && shown.endsWith('x\n'), 'the start and the end of the long line');
  assert.equal(head.stdout.omitted_bytes + Buffer.byteLength(shown), 'first\n'.length + LONG_BYTES + 1);

  const tail = await tools.ok('output', { id: 'long-line', tail: 2, max_bytes: 4096 });
  assert.deepEqual([tail.stdout.first_line, tail.stdout.last_line, tail.stdout.omitted_lines], [2, 3, 0]);
  assert.ok(tail.stdout.text.startsWith('x'), 'the tail starts with the long line');
});
