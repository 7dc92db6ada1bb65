// The docs a newcomer reads hold together: README.md stays short and links every docs/ page, every
// relative link of README.md and docs/*.md leads to a file (and its #anchor to a heading there),
// and every docs/ page opens with a table of contents of its sections.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../../..', import.meta.url)));
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');
const PAGES = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .map((name) => join(DOCS, name));

/** The text outside fenced code blocks and inline code spans, where links and headings are. */
function prose(path: string): string {
  return readFileSync(path, 'utf8')
    .replace(/^```[\s\S]*?^```/gm, '')
    .replace(/`[^`\n]*`/g, '``');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** Each heading of a page, as [level, anchor], a repeated anchor numbered as GitHub does. */
function headings(path: string): [number, string][] {
  const seen = new Map<string, number>();
  const raw = readFileSync(path, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return [...raw.matchAll(/^(#{1,6}) (.+)$/gm)].map((match) => {
    const base = slug(match[2]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    return [match[1]!.length, count === 0 ? base : `${base}-${count}`];
  });
}

/** The targets of a page's links that are not URLs. */
function relativeLinks(path: string): string[] {
  return [...prose(path).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/.test(target));
}

test('README.md is at most 300 lines', () => {
  const lines = readFileSync(README, 'utf8').split('\n').length - 1;
  assert.ok(lines <= 300, `README.md has ${lines} lines; move the detail to a page of docs/`);
});

test('README.md links every page of docs/', () => {
  const linked = new Set(relativeLinks(README).map((target) => target.split('#')[0]));
  const missing = PAGES.map((page) => relative(ROOT, page)).filter((page) => !linked.has(page));
  assert.deepEqual(missing, [], 'pages of docs/ that README.md does not link');
});

test('every relative link of README.md and docs/*.md leads to a file, and its anchor to a heading', () => {
  const broken: string[] = [];
  for (const page of [README, ...PAGES]) {
    for (const target of relativeLinks(page)) {
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const path = file === '' ? page : resolve(dirname(page), file);
      const where = `${relative(ROOT, page)}: ${target}`;
      if (!existsSync(path)) broken.push(`${where} (no such file)`);
      else if (anchor !== undefined && path.endsWith('.md')) {
        if (!headings(path).some(([, name]) => name === anchor)) broken.push(`${where} (no such heading)`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('every page of docs/ opens with a table of contents linking each of its sections', () => {
  for (const page of PAGES) {
    const text = prose(page);
    const top = text.slice(0, text.search(/^## /m));
    const listed = new Set([...top.matchAll(/^ *- \[.*\]\(#([^)]+)\)$/gm)].map((match) => match[1]));
    const sections = headings(page).filter(([level]) => level === 2);
    assert.ok(sections.length > 0, `${relative(ROOT, page)} has sections`);
    const unlisted = sections.map(([, anchor]) => anchor).filter((anchor) => !listed.has(anchor));
    assert.deepEqual(unlisted, [], `${relative(ROOT, page)}: sections missing from its table of contents`);
  }
});
