// The first key given twice in one object of a JSON text, which JSON.parse would take silently
// (the last one wins): where it is, as a path (`rules[1].decision`) and a line and column.

export interface DuplicateKey {
  /** The key's path, as a refusal names a field: `rules[1].decision`, `rules`. */
  path: string;
  /** Of its second occurrence, from 1. */
  line: number;
  column: number;
}

/** An object or array the scan is in: its path, and its keys so far or the index of its item. */
interface Container {
  path: string;
  keys: Set<string> | null;
  key: string | null;
  index: number;
  expectsKey: boolean;
}

/** The first duplicate key of `text`, which must be valid JSON (parse it first), or null. */
export function findDuplicateKey(text: string): DuplicateKey | null {
  const stack: Container[] = [];
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!;
    const top = stack[stack.length - 1];
    if (char === '"') {
      const end = stringEnd(text, at);
      if (top?.keys && top.expectsKey) {
        const key = JSON.parse(text.slice(at, end)) as string;
        if (top.keys.has(key)) return { path: joinPath(top.path, key), ...position(text, at) };
        top.keys.add(key);
        top.key = key;
        top.expectsKey = false;
      }
      at = end - 1;
    } else if (char === '{' || char === '[') {
      const path = top === undefined ? '' : top.keys ? joinPath(top.path, top.key!) : `${top.path}[${top.index}]`;
      stack.push({ path, keys: char === '{' ? new Set() : null, key: null, index: 0, expectsKey: char === '{' });
    } else if (char === '}' || char === ']') stack.pop();
    else if (char === ',' && top !== undefined) {
      if (top.keys) top.expectsKey = true;
      else top.index++;
    }
  }
  return null;
}

/** The index just past the string that starts at `start`. */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
  return at + 1;
}

function joinPath(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function position(text: string, at: number): { line: number; column: number } {
  const before = text.slice(0, at);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: at - lineStart + 1 };
}
