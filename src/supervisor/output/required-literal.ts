// The literal text every match of a grep pattern contains, which the reader searches the bytes for
// before it runs the expression: bench/output-grep's word row over 100 MiB at 0.86x and 0.88x of
// grep -n's speed with it, 0.24x and 0.25x without (2026-12-08; bench/README.md, "What each trick
// buys"); test/output/required-literal.test.ts holds it to RegExp over random patterns. The pattern is one V8 took, without the i, u or v flag:
// read as V8 reads it (Annex B), an atom at a time with its quantifier. Anything this does not
// know as a single literal character (a class, a group, an escape it does not decode) ends the run
// of text: a shorter literal only searches less well, a wrong one would miss lines.

/** Runs shorter than this are not worth searching for first. */
const MIN_LITERAL_CHARS = 3;

interface Atom {
  /** The character it matches, or null for anything else (a class, a group, an assertion, `.`). */
  char: string | null;
  end: number;
}

/**
 * The longest run of literal text (of 3 characters or more) that every match of `source`
 * contains, or null: an alternative at the top may do without any.
 */
export function requiredLiteral(source: string): string | null {
  let best = '';
  let run = '';
  const end = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  for (let at = 0; at < source.length;) {
    if (source[at] === '|') return null;
    const atom = readAtom(source, at);
    const quantifier = readQuantifier(source, atom.end);
    at = quantifier?.end ?? atom.end;
    if (atom.char === null) end();
    else if (quantifier === null) run += atom.char;
    else if (quantifier.min === 0) end();
    else {
      // It is there at least once: the run before ends on it, and the run after starts with it.
      run += atom.char;
      end();
      run = atom.char;
    }
  }
  end();
  return best.length >= MIN_LITERAL_CHARS ? best : null;
}

function readAtom(source: string, at: number): Atom {
  const char = source[at]!;
  if (char === '\\') return readEscape(source, at);
  if (char === '[') return { char: null, end: classEnd(source, at) };
  if (char === '(') return { char: null, end: groupEnd(source, at) };
  if ('.^$'.includes(char) || isSurrogate(char)) return { char: null, end: at + 1 };
  return { char, end: at + 1 };
}

/** The escape at `at` (a backslash): the character it stands for where it is one this knows. */
function readEscape(source: string, at: number): Atom {
  const next = source[at + 1] ?? '';
  const controls: Record<string, string> = { t: '\t', n: '\n', v: '\v', f: '\f', r: '\r' };
  if (next in controls) return { char: controls[next]!, end: at + 2 };
  const digits = { x: 2, u: 4 }[next];
  const hex = digits === undefined ? null : new RegExp(`^[0-9a-fA-F]{${digits}}`).exec(source.slice(at + 2));
  if (hex !== null) {
    const char = String.fromCharCode(Number.parseInt(hex[0], 16));
    return { char: isSurrogate(char) ? null : char, end: at + 2 + hex[0].length };
  }
  if (next === 'c' && /^[A-Za-z]$/.test(source[at + 2] ?? ''))
    return { char: String.fromCharCode(source.charCodeAt(at + 2) % 32), end: at + 3 };
  if (next === '0' && !/^[0-9]$/.test(source[at + 2] ?? '')) return { char: '\0', end: at + 2 };
  // Digits: a back reference, an octal escape of up to three (\141 is "a") or \8: none is taken
  // as text, nor any digit after it, which may belong to it.
  if (/^[0-9]$/.test(next)) return { char: null, end: at + 1 + /^[0-9]+/.exec(source.slice(at + 1))![0].length };
  // A class (\d), an assertion (\b), or a letter escape this does not decode.
  if (/^[A-Za-z]$/.test(next) || isSurrogate(next)) return { char: null, end: at + 2 };
  return { char: next, end: at + 2 };
}

/** The quantifier at `at` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each maybe lazy), or null when none is. */
function readQuantifier(source: string, at: number): { min: number; end: number } | null {
  const char = source[at];
  let min: number;
  let end: number;
  if (char === '*' || char === '?') [min, end] = [0, at + 1];
  else if (char === '+') [min, end] = [1, at + 1];
  else {
    const braces = char === '{' ? /^\{([0-9]+)(?:,[0-9]*)?\}/.exec(source.slice(at)) : null;
    if (braces === null) return null; // a "{" that opens no quantifier is a literal, as Annex B reads it
    [min, end] = [Number(braces[1]), at + braces[0].length];
  }
  return { min, end: source[end] === '?' ? end + 1 : end };
}

/** Just past the class opening at `start`; in a class, "]" closes it unless escaped. */
function classEnd(source: string, start: number): number {
  for (let at = start + 1; at < source.length; at++) {
    if (source[at] === '\\') at++;
    else if (source[at] === ']') return at + 1;
  }
  return source.length;
}

/** Just past the group opening at `start`, across nested groups, classes and escapes. */
function groupEnd(source: string, start: number): number {
  let depth = 0;
  for (let at = start; at < source.length; at++) {
    const char = source[at];
    if (char === '\\') at++;
    else if (char === '[') at = classEnd(source, at) - 1;
    else if (char === '(') depth++;
    else if (char === ')' && --depth === 0) return at + 1;
  }
  return source.length;
}

function isSurrogate(char: string): boolean {
  const code = char.charCodeAt(0);
  return code >= 0xd800 && code <= 0xdfff;
}
