// What the screen's emulator is fed: a task's output as written, but with a CSI's counts clamped
// to the terminal and an OSC's payload cut, wherever the sequence is cut between reads. A terminal
// fed the filtered text shows what one fed the raw text shows.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import fc from 'fast-check';
import { ScreenInput } from '../../src/supervisor/output/screen-input.js';
import { params } from '../reliability/fuzz/runs.js';

const { Terminal } = createRequire(import.meta.url)('@xterm/headless') as typeof import('@xterm/headless');

/** `text` through the filter of a terminal whose larger side is `side`, given in the pieces `cuts` makes. */
function filtered(text: string, side = 80, cuts: number[] = []): string {
  const input = new ScreenInput(side);
  const places = [0, ...cuts.filter((cut) => cut > 0 && cut < text.length).sort((a, b) => a - b), text.length];
  return places
    .slice(1)
    .map((end, index) => input.filter(text.slice(places[index], end)))
    .join('');
}

test("a CSI's numbers are clamped to the bound; a private CSI's and text's are kept", () => {
  assert.equal(filtered('\x1b[2147483647S'), '\x1b[255S');
  assert.equal(filtered('x\x1b[99999999999999999999b', 1000), 'x\x1b[1000b');
  assert.equal(filtered('\x1b[9999;9999H\x1b[38;2;255;128;0m'), '\x1b[255;255H\x1b[38;2;255;128;0m');
  assert.equal(filtered('\x1b[?1049h\x1b[?2004h\x1b[>4;2m'), '\x1b[?1049h\x1b[?2004h\x1b[>4;2m');
  assert.equal(filtered('line 123456789 of text\r\n'), 'line 123456789 of text\r\n');
  assert.equal(filtered('\x9b70000T\x1b[5000\x08000L'), '\x9b255T\x1b[\x08255L', 'C1 CSI, and a control inside');
  assert.equal(filtered("\x1b[70000'}\x1b[70000 @"), "\x1b[255'}\x1b[255 @", 'intermediates');
});

test('a sequence cut between reads is clamped as a whole', () => {
  assert.equal(filtered('ab\x1b[123456S', 80, [3, 5, 7]), 'ab\x1b[255S');
  assert.equal(filtered('\x1b[?1049h', 80, [2, 4]), '\x1b[?1049h');
});

test("an OSC's or DCS's payload keeps 4096 characters and its end; what follows it is kept", () => {
  const title = 'x'.repeat(100_000);
  const osc = filtered(`\x1b]0;${title}\x07after`, 80, [50_000]);
  assert.deepEqual([osc.length, osc.slice(0, 6), osc.slice(-6)], [2 + 4096 + 6, '\x1b]0;xx', '\x07after']);
  const link = filtered(`\x1b]8;;${title}\x1b\\link`);
  assert.deepEqual([link.length, link.slice(-6)], [2 + 4096 + 2 + 4, '\x1b\\link']);
  const dcs = filtered(`\x1bP${title}\x07${title}\x1b\\z`);
  assert.deepEqual([dcs.length, dcs.slice(-3)], [2 + 4096 + 3, '\x1b\\z'], 'a BEL does not end a DCS');
  assert.equal(filtered('\x1b]0;short title\x07'), '\x1b]0;short title\x07');
});

test("a string's body is cut the same wherever the reads cut it, and whatever ends or breaks into it", () => {
  const body = fc
    .array(
      fc.oneof(
        fc.integer({ min: 1, max: 5000 }).map((count) => 'x'.repeat(count)),
        fc.constantFrom('\x07', '\x18', '\x1a', '\x1b\\', '\x9c', '\x1b]0;', '\x1bP', '\x9d', '\x1b[5S', 'é'),
      ),
      { maxLength: 12 },
    )
    .map((pieces) => pieces.join(''));
  fc.assert(
    fc.property(
      fc.constantFrom('\x1b]0;', '\x1bP', '\x1b_', '\x90'),
      body,
      fc.array(fc.nat()),
      (opener, text, cuts) => {
        const whole = `${opener}${text}after`;
        const places = cuts.map((cut) => cut % (whole.length + 1));
        assert.equal(filtered(whole, 80, places), filtered(whole));
      },
    ),
    params(200),
  );
});

/** What a 30x12 terminal shows once fed `text`, with its cursor. */
async function screenOf(text: string): Promise<string> {
  const terminal = new Terminal({ cols: 30, rows: 12, scrollback: 0, allowProposedApi: true });
  await new Promise<void>((resolve) => terminal.write(text, resolve));
  const buffer = terminal.buffer.active;
  const rows = Array.from({ length: 12 }, (_, row) => buffer.getLine(row)?.translateToString(true) ?? '');
  terminal.dispose();
  return `${rows.join('\n')}\ncursor ${buffer.cursorX},${buffer.cursorY} ${buffer.type}`;
}

const piece = fc.oneof(
  fc.stringMatching(/^[a-z0-9 ]{1,8}$/),
  fc.constantFrom(
    '\r\n',
    '\n',
    '\t',
    '\b',
    '\x1b[2J',
    '\x1bc',
    '\x1b#8',
    '\x1b[?1049h',
    '\x1b[?1049l',
    '\x1bM',
    '\x1b]0;t\x07',
  ),
  fc
    .tuple(
      fc.constantFrom('S', 'T', 'L', 'M', 'C', 'D', 'G', 'H', 'I', 'Z', '@', 'P', 'X', 'd', 'J', 'K', ' @', "'}"),
      fc.integer({ min: 0, max: 3000 }),
    )
    .map(([final, count]) => `\x1b[${count}${final}`),
  fc
    .tuple(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 3000 }))
    .map(([row, col]) => `\x1b[${row};${col}H`),
  fc
    .tuple(
      fc.constantFrom('\x1b[', '\u009b'),
      fc.integer({ min: 0, max: 300 }),
      fc.constantFrom('', '\x08', '\r'),
      fc.nat(99),
    )
    .map(([start, high, control, low]) => `${start}${high}${control}${low}${['S', 'L', 'C', 'T'][low % 4]}`),
);

test('a terminal fed the filtered text, in any pieces, shows what one fed the raw text shows (random moves, scrolls, erasures)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(piece, { maxLength: 40 }),
      fc.array(fc.nat(2000), { maxLength: 8 }),
      async (pieces, cuts) => {
        const raw = pieces.join('');
        assert.equal(await screenOf(filtered(raw, 30, cuts)), await screenOf(raw), JSON.stringify({ raw, cuts }));
      },
    ),
    params(150),
  );
});

test('a run of combining marks keeps its first 30, wherever the reads cut it; shorter runs pass whole', () => {
  const marks = (count: number, mark = '\u0301') => mark.repeat(count);
  assert.equal(filtered(`a${marks(8000)}b`), `a${marks(30)}b`);
  for (const cut of [1, 11, 31, 32, 4000])
    assert.equal(filtered(`a${marks(8000)}b${marks(40)}`, 80, [cut]), `a${marks(30)}b${marks(30)}`, `cut at ${cut}`);
  assert.equal(
    filtered(`e${marks(3, '\u0301\u0323')}\u{1d165}${marks(2, '\u{1d167}')}`),
    `e${marks(3, '\u0301\u0323')}\u{1d165}${marks(2, '\u{1d167}')}`,
  );
  const astral = marks(40, '\u{1d167}');
  assert.equal(filtered(`x${astral}`, 80, [23]), `x${marks(30, '\u{1d167}')}`, 'marks outside the BMP count once');
});
