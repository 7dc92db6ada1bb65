// What a careless or hostile program prints on a terminal: escape sequences with numbers up to
// 2^31 and beyond, floods of clears and resets, strings that never end, cursors sent far off the
// screen, C1 controls, broken UTF-8, long lines and progress bars, mixed with ordinary text.
import fc from 'fast-check';

const huge = fc.oneof(
  fc.integer({ min: 0, max: 9 }),
  fc.integer({ min: 10, max: 100_000 }),
  fc.constantFrom(2 ** 31 - 1, 2 ** 31, 2 ** 32 + 5, 999_999_999_999),
);
const final = fc.constantFrom(
  ...'@ABCDEFGHIJKLMPSTXZ`abdefghlmnqrstu'.split(''),
  ' @',
  ' A',
  "'}",
  "'~",
  ' q',
  '!p',
  '$p',
);
const prefix = fc.constantFrom('', '', '', '?', '>', '=');

const csi = fc
  .tuple(fc.constantFrom('\x1b[', '\u009b'), prefix, fc.array(huge, { minLength: 0, maxLength: 4 }), final)
  .map(([start, marker, numbers, end]) => `${start}${marker}${numbers.join(';')}${end}`);
const flood = fc
  .tuple(
    fc.constantFrom('\x1b[2J', '\x1bc', '\x1b#8', '\x1b[?1049h\x1b[?1049l', '\x1b[3J', '\x1bM'),
    fc.integer({ min: 1, max: 300 }),
  )
  .map(([sequence, times]) => sequence.repeat(times));
const unended = fc
  .tuple(
    fc.constantFrom('\x1b]0;', '\x1b]8;;', '\x1bP', '\x1b_', '\x1b^', '\u009d2;'),
    fc.integer({ min: 0, max: 20_000 }),
  )
  .map(([start, length]) => start + 't'.repeat(length));
const ended = unended.chain((string) => fc.constantFrom('\x07', '\x1b\\', '\u009c', '\x18').map((end) => string + end));
const far = fc.tuple(huge, huge).map(([row, col]) => `\x1b[${row};${col}H*`);
const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('\r\n', '\n', '\t', '\b', '\r', 'progress 50%\r', '\x1b[1;31mred\x1b[0m'),
  fc.integer({ min: 100, max: 5000 }).map((length) => 'L'.repeat(length)),
);
const brokenUtf8 = fc.constantFrom('\xc3', '\xe2\x82', '\xf0\x9f\x98', '\xff\xfe', '\xed\xa0\x80');

/** One piece of what a task prints, as bytes ('latin1' for the broken UTF-8, 'utf8' otherwise). */
const piece: fc.Arbitrary<Buffer> = fc.oneof(
  { weight: 4, arbitrary: csi.map((value) => Buffer.from(value)) },
  { weight: 1, arbitrary: flood.map((value) => Buffer.from(value)) },
  { weight: 1, arbitrary: unended.map((value) => Buffer.from(value)) },
  { weight: 1, arbitrary: ended.map((value) => Buffer.from(value)) },
  { weight: 2, arbitrary: far.map((value) => Buffer.from(value)) },
  { weight: 4, arbitrary: text.map((value) => Buffer.from(value)) },
  { weight: 1, arbitrary: brokenUtf8.map((value) => Buffer.from(value, 'latin1')) },
);

/** What a task prints: up to 60 pieces. */
export const terminalBytes = fc.array(piece, { minLength: 1, maxLength: 60 }).map((pieces) => Buffer.concat(pieces));

/** A terminal's size: mostly ordinary, now and then a sliver or the largest run allows. */
export const terminalSize = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ cols: fc.integer({ min: 1, max: 300 }), rows: fc.integer({ min: 1, max: 100 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ cols: 1000, rows: 1000 }) },
  { weight: 1, arbitrary: fc.record({ cols: fc.constant(1), rows: fc.integer({ min: 1, max: 1000 }) }) },
);
