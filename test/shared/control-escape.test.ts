import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeControls } from '../../src/shared/control-escape.js';

test('what a terminal acts on or draws as nothing is shown escaped; an emoji, letters and backslashes are not', () => {
  const cases: Array<[string, string]> = [
    ['npm publish --registry=x\x1b[33D\x1b[K--dry-run', 'npm publish --registry=x\\e[33D\\e[K--dry-run'],
    ['bell\x07 tab\t del\x7f csi\x9b', 'bell\\a tab\\t del\\x7f csi\\x9b'],
    ['bidi \u202e and a blank braille \u2800 cell', 'bidi \\u202e and a blank braille \\u2800 cell'],
    ['zero\u200bwidth, a tag \u{e0041}', 'zero\\u200bwidth, a tag \\U000e0041'],
    ['a family 👨‍👩‍👧 and a heart ❤️, café, C:\\path', 'a family 👨‍👩‍👧 and a heart ❤️, café, C:\\path'],
  ];
  for (const [text, shown] of cases) assert.equal(escapeControls(text), shown, JSON.stringify(text));
});
