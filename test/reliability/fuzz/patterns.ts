// Regular expressions and lines for the grep and wait_for properties: patterns built from the
// pieces that trip a literal prefilter (quantifier digits, classes, escapes by code, alternatives,
// anchors) over a small alphabet, so that lines match often; and hostile ones, nested quantifiers
// repeated, that no engine runs fast.
import fc from 'fast-check';

/** The characters lines are made of: few, so that the pieces below match often. */
const LINE_CHARS = ['a', 'b', 'a', 'b', '1', '2', '.', ' ', 'A', '{', ',', '}', 'é', '\t', '\r', '\u2028'];

/** A line of up to `max` characters over LINE_CHARS. */
export const line = (max = 30) =>
  fc.array(fc.constantFrom(...LINE_CHARS), { maxLength: max }).map((chars) => chars.join(''));

/** A piece of a pattern and a text it matches. */
type Piece = [source: string, sample: string];

const literalPiece = fc.constantFrom<Piece>(
  ...['a', 'b', '1', '2', ' ', 'A', ',', 'é', 'ab', 'ba', 'aba', '1.2', '{', '}', 'a{', '{1', 'b{x}'].map(
    (text): Piece => [text, text],
  ),
);
const escapePiece = fc.constantFrom<Piece>(
  ['\\.', '.'],
  ['\\d', '2'],
  ['\\D', 'a'],
  ['\\w', 'b'],
  ['\\s', ' '],
  ['\\t', '\t'],
  ['\\x61', 'a'],
  ['\\x31', '1'],
  ['\\u0062', 'b'],
  ['\\u0041', 'A'],
  ['\\{', '{'],
  ['\\}', '}'],
  ['\\e', 'e'],
  ['\\0', '\0'],
  // Annex B's octal escapes (a back reference where the pattern has that many groups) and \8, \9.
  ['\\01', '\x01'],
  ['\\141', 'a'],
  ['\\62', '2'],
  ['\\1', '\x01'],
  ['\\8', '8'],
);
const classPiece = fc.constantFrom<Piece>(
  ['[12]', '1'],
  ['[ab]', 'b'],
  ['[^a]', 'b'],
  ['[.]', '.'],
  ['[\\]a]', 'a'],
  ['.', 'A'],
);
/** A quantifier and how many times the sample repeats the piece. */
const quantifier: fc.Arbitrary<[string, number]> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<[string, number]>(['', 1]) },
  {
    weight: 3,
    arbitrary: fc.oneof(
      fc.tuple(fc.constantFrom('*', '{0,2}', '*?'), fc.integer({ min: 0, max: 2 })),
      fc.tuple(fc.constantFrom('+', '{1,3}', '{1,}', '+?', '{1,3}?'), fc.integer({ min: 1, max: 3 })),
      fc.tuple(fc.constant('?'), fc.integer({ min: 0, max: 1 })),
      fc.constant<[string, number]>(['{2}', 2]),
      fc.constant<[string, number]>(['{0}', 0]),
    ),
  },
);
const anchor = fc.constantFrom('^', '$');

const join = (parts: Array<[Piece, [string, number]]>): Piece => [
  parts.map(([[source], [times]]) => source + times).join(''),
  parts.map(([[, sample], [, count]]) => sample.repeat(count)).join(''),
];

const piece: fc.Arbitrary<Piece> = fc.letrec<{ piece: Piece; sequence: Piece }>((tie) => ({
  piece: fc.oneof(
    { weight: 24, arbitrary: literalPiece },
    { weight: 4, arbitrary: escapePiece },
    { weight: 2, arbitrary: classPiece },
    {
      weight: 1,
      arbitrary: fc
        .tuple(tie('sequence'), tie('sequence'), fc.boolean())
        .map(([[first, sample], [second, other], pick]): Piece => [`(?:${first}|${second})`, pick ? sample : other]),
    },
    { weight: 1, arbitrary: tie('sequence').map(([source, sample]): Piece => [`(${source})`, sample]) },
  ),
  sequence: fc.array(fc.tuple(tie('piece'), quantifier), { minLength: 1, maxLength: 3 }).map(join),
})).piece;

/**
 * A pattern of quantified pieces, maybe anchored, now and then with an alternative at the top,
 * and a text that matches it (anchors aside: a line made of the text alone matches).
 */
export const grepPattern: fc.Arbitrary<{ source: string; sample: string }> = fc
  .tuple(
    fc.option(anchor, { nil: '' }),
    fc.array(fc.tuple(piece, quantifier), { minLength: 2, maxLength: 8 }).map(join),
    fc.option(anchor, { nil: '' }),
    fc.option(fc.array(fc.tuple(piece, quantifier), { minLength: 1, maxLength: 3 }).map(join), { nil: null, freq: 6 }),
  )
  .map(([start, [body, sample], end, alternative]) => ({
    source: start + body + end + (alternative === null ? '' : `|${alternative[0]}`),
    sample,
  }))
  .filter(({ source }) => source.length <= 1024);

/** Lines around a pattern's sample: the sample alone, within other text, cut or changed a character, and lines of their own. */
export const linesAround = (sample: string) =>
  fc
    .array(
      fc.oneof(
        fc.constant(sample),
        fc.tuple(line(6), line(6)).map(([before, after]) => before + sample + after),
        fc
          .integer({ min: 0, max: Math.max(0, sample.length - 1) })
          .map((at) => sample.slice(0, at) + sample.slice(at + 1)),
        fc
          .tuple(fc.integer({ min: 0, max: sample.length }), fc.constantFrom(...LINE_CHARS))
          .map(([at, char]) => sample.slice(0, at) + char + sample.slice(at + 1)),
        line(),
      ),
      { minLength: 1, maxLength: 12 },
    )
    .map((lines) => lines.map((text) => text.replace(/\n/g, ' ')));

/** Nested quantifiers, repeated: the shapes that take V8's engines longest a byte. */
export const hostilePattern = fc
  .tuple(
    fc.constantFrom('(?:a+)+', '(?:a|a)+', '(?:a*)*', '(a+)+', '(?:a?){0,16}', '(?:[a-z]+)+', '(?:\\w+\\s?)+'),
    fc.integer({ min: 1, max: 140 }),
    fc.constantFrom('$', 'b', '!', ''),
  )
  .map(([piece, times, end]) => piece.repeat(times) + end)
  .filter((source) => source.length <= 1024);
