// Clean text of a terminal's lines: cursor moves stay within the terminal's width, as on a
// terminal, and nothing a line holds makes its clean text long.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanTerminalLine } from '../../src/supervisor/output/terminal-text.js';

test('a cursor move to column one billion stops at the last column of a 120-column terminal', () => {
  assert.equal(cleanTerminalLine('A\x1b[1000000000CB', 120), `A${' '.repeat(118)}B`);
  assert.equal(cleanTerminalLine('A\x1b[99999999999999999999999999CB', 80), `A${' '.repeat(78)}B`);
  assert.equal(cleanTerminalLine('\x1b[1000000000GB', 40), `${' '.repeat(39)}B`);
});

test('moves within the width are taken as they are, and a tab stops at the last column', () => {
  assert.equal(cleanTerminalLine('ab\x1b[3Cc\x1b[2Dd\x1b[1Ge', 80), 'eb  dc');
  assert.equal(cleanTerminalLine('x\ty', 80), 'x       y');
  assert.equal(cleanTerminalLine('\t\t\tz', 10), `${' '.repeat(9)}z`);
});

test('a line longer than the width wraps: moves stay within the row the cursor is on', () => {
  const first = 'a'.repeat(12);
  assert.equal(cleanTerminalLine(`${first}\x1b[999Cz`, 10), `${first}${' '.repeat(7)}z`);
  assert.equal(cleanTerminalLine(`${first}\x1b[999Dz`, 10), `${'a'.repeat(10)}za`);
  assert.equal(cleanTerminalLine(`${first}\x1b[2Gz`, 10), `${'a'.repeat(11)}z`);
});

test('repeated moves across the terminal cannot make a line longer than eight columns a character and a row', () => {
  const raw = '\x1b[999Cx'.repeat(10_000);
  const clean = cleanTerminalLine(raw, 1000);
  assert.ok(clean.length <= raw.length * 8 + 1000, `${clean.length} columns from ${raw.length} characters`);
  assert.ok(clean.endsWith('x'));
});
