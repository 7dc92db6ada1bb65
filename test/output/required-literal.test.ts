// The literal grep searches the bytes for: every line JavaScript's RegExp matches holds it, for the
// forms the issue found it wrong on and for random patterns of quantifiers, classes and escapes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { requiredLiteral } from '../../src/supervisor/output/required-literal.js';
import { grepPattern, linesAround } from '../reliability/fuzz/patterns.js';
import { params } from '../reliability/fuzz/runs.js';

/** Whether V8 takes `source` at all (the generator makes a few it refuses, such as a quantifier on a quantifier). */
function isPattern(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}

test('quantifier digits and escapes by code are read as V8 reads them', () => {
  assert.equal(requiredLiteral('[0-9]{1,3}\\.[0-9]{1,3}'), null);
  assert.equal(requiredLiteral('\\d{1,3}\\.\\d+'), null);
  assert.equal(requiredLiteral('x{2,10}'), null);
  assert.equal(requiredLiteral('\\x41BCD'), 'ABCD');
  assert.equal(requiredLiteral('\\u0041BCD'), 'ABCD');
  assert.equal(requiredLiteral('\\01abc'), 'abc', '\\01 is one character: U+0001');
  assert.equal(requiredLiteral('x\\1234'), null, '\\123 is one character: S');
  assert.equal(requiredLiteral('\\8abcd'), 'abcd');
  assert.equal(requiredLiteral('ERROR: .*'), 'ERROR: ');
  assert.equal(requiredLiteral('server at \\d+(?:\\.\\d+){3} up'), 'server at ');
  assert.equal(requiredLiteral('abc+d'), 'abc');
  assert.equal(requiredLiteral('ab?cde'), 'cde');
  assert.equal(requiredLiteral('a{x}bc'), 'a{x}bc');
  assert.equal(requiredLiteral('error|warning'), null);
  assert.equal(requiredLiteral('(error|warning) in'), ' in');
});

test('every line RegExp matches holds the literal (random patterns and lines around a text they match)', () => {
  let checked = 0;
  fc.assert(
    fc.property(
      grepPattern.chain(({ source, sample }) => linesAround(sample).map((lines) => ({ source, lines }))),
      ({ source, lines }) => {
        const literal = requiredLiteral(source);
        if (literal === null || !isPattern(source)) return;
        const pattern = new RegExp(source);
        for (const text of lines.filter((each) => pattern.test(each))) {
          checked++;
          assert.ok(
            text.includes(literal),
            `/${source}/ matches ${JSON.stringify(text)}, which lacks ${JSON.stringify(literal)}`,
          );
        }
      },
    ),
    params(3000),
  );
  assert.ok(checked > 0, 'some matching lines had a literal to hold');
});
