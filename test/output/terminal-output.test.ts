// A pty task's output through the output tool: clean text of colour and a progress bar, and the
// screen of a full-screen program (cursor moves by printf, then less driven with input).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

/** The screen of task `id` once `done` holds for it; fails naming what it showed last. */
async function screenWhen(tools: ToolClient, id: string, done: (screen: any) => boolean): Promise<any> {
  let screen: any = null;
  const seen = await waitFor(
    async () => {
      screen = (await tools.ok('output', { id, screen: true })).screen;
      return done(screen);
    },
    10_000,
    50,
  );
  assert.ok(seen, `the screen of ${id} never showed what was awaited:\n${screen?.text}`);
  return screen;
}

test('a pty task: clean text of colour and a progress bar, and its screen', async (t) => {
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);

  await t.test('colour and a progress bar come back as clean text; raw gives the bytes', async () => {
    const command =
      "printf '\\033[1;32mgreen\\033[0m text\\n'; for i in 10 50 100; do printf '\\rprogress %3d%%' $i; sleep 0.05; done; printf '\\n'; printf 'abc\\bX\\n'; printf 'erased\\r\\033[Kkept\\n'";
    const task = await tools.ok('run', { command, pty: true, name: 'bar', wait_seconds: 10 });
    assert.equal(task.state, 'done');
    const clean = await tools.ok('output', { id: 'bar' });
    assert.equal(clean.stdout.text, 'green text\nprogress 100%\nabX\nkept\n');
    assert.deepEqual([clean.stdout.first_line, clean.stdout.last_line], [1, 4]);
    const found = await tools.ok('output', { id: 'bar', grep: '^progress 1' });
    assert.equal(found.stdout.text, '2:progress 100%\n');
    const raw = await tools.ok('output', { id: 'bar', raw: true });
    assert.match(
      raw.stdout.text,
      // eslint-disable-next-line no-control-regex -- the terminal's escape sequences, as written
      /^\x1b\[1;32mgreen\x1b\[0m text\r\n\rprogress {2}10%\rprogress {2}50%\rprogress 100%\r\n/,
    );
  });

  await t.test('cursor moves drawn by printf show on the screen as a person would see them', async () => {
    const command = "printf '\\033[2J\\033[3;5Hhello\\033[5;1Hbottom\\033[1;1Htop-left'";
    await tools.ok('run', { command, pty: true, cols: 30, rows: 6, name: 'drawn', wait_seconds: 10 });
    const answer = await tools.ok('output', { id: 'drawn', screen: true });
    assert.deepEqual(answer.screen, {
      text: ['top-left', '', '    hello', '', 'bottom', ''].join('\n'),
      cursor: { row: 0, col: 8 },
      rows: 6,
      cols: 30,
      alternate_screen: false,
    });
    assert.equal(answer.stdout, undefined, 'the screen comes instead of the text');
  });

  await t.test('less on a file shows its first page, and a key sent with input turns it', async () => {
    const file = join(daemon.scratch, 'numbers.txt');
    writeFileSync(file, Array.from({ length: 100 }, (_, i) => `number ${i + 1}`).join('\n'));
    await tools.ok('run', {
      command: `less ${file}`,
      pty: true,
      interactive: true,
      cols: 40,
      rows: 10,
      name: 'pager',
      wait_seconds: 0,
      timeout_seconds: 60,
    });
    const first = await screenWhen(tools, 'pager', (screen) => screen.text.startsWith('number 1\n'));
    assert.equal(
      first.text.split('\n').slice(0, 9).join('\n'),
      Array.from({ length: 9 }, (_, i) => `number ${i + 1}`).join('\n'),
    );
    assert.equal(first.alternate_screen, true);
    await tools.ok('input', { id: 'pager', text: ' ' });
    const second = await screenWhen(tools, 'pager', (screen) => screen.text.startsWith('number 10\n'));
    assert.equal(second.text.split('\n')[8], 'number 18');
    await tools.ok('input', { id: 'pager', text: 'q' });
    const ended = await tools.ok('status', { id: 'pager', wait_seconds: 10 });
    assert.deepEqual([ended.state, ended.exit_code], ['done', 0]);
    const after = await tools.ok('output', { id: 'pager', screen: true });
    assert.equal(after.screen.alternate_screen, false, 'less left the alternate screen');
  });

  await t.test('top in batch mode, a real program, shows its header on the screen', async () => {
    await tools.ok('run', {
      command: 'top -b -n 1 | head -5',
      pty: true,
      cols: 100,
      rows: 10,
      name: 'top',
      wait_seconds: 10,
    });
    const { screen } = await tools.ok('output', { id: 'top', screen: true });
    assert.match(screen.text, /^top - .*load average/);
    assert.match(screen.text, /\nTasks: +\d+ total/);
  });
});
