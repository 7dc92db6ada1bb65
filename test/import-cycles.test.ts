// No module of src imports itself back through others: read from the sources' imports (static ones,
// `import type` included, and dynamic `import()`), so that a module and what it stands on can be read,
// and loaded, in one direction.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const SRC = join(ROOT, 'src');

function listSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listSources(path);
    return /\.c?ts$/.test(entry.name) ? [path] : [];
  });
}

/** Each file of src (relative to the repository, as .ts paths) and the files of src it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const path of listSources(SRC)) {
    const text = readFileSync(path, 'utf8');
    const specifiers = [
      ...text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms),
      ...text.matchAll(/\bimport\(\s*'(\.[^']+)'\s*\)/g),
    ].map((match) => match[1]!);
    const targets = specifiers.map((specifier) =>
      relative(ROOT, resolve(dirname(path), specifier)).replace(/\.(c?)js$/, '.$1ts'),
    );
    graph.set(relative(ROOT, path), [...new Set(targets)]);
  }
  return graph;
}

/** Every cycle a depth-first walk meets, each as the files around it (`a -> b -> a`). */
function cyclesOf(graph: Map<string, string[]>): string[] {
  const done = new Set<string>();
  const path: string[] = [];
  const cycles: string[] = [];
  const visit = (file: string) => {
    const at = path.indexOf(file);
    if (at >= 0) return void cycles.push([...path.slice(at), file].join(' -> '));
    if (done.has(file) || !graph.has(file)) return;
    path.push(file);
    for (const target of graph.get(file)!) visit(target);
    path.pop();
    done.add(file);
  };
  for (const file of [...graph.keys()].sort()) visit(file);
  return cycles;
}

test("the import graph was read: the daemon's entry reaches the task service", () => {
  const graph = importGraph();
  assert.ok(graph.size > 40, `only ${graph.size} source files under ${SRC}`);
  assert.ok(graph.get('src/supervisor/main.ts')?.includes('src/supervisor/daemon.ts'), 'main.ts imports daemon.ts');
  assert.ok(graph.get('src/supervisor/daemon.ts')?.includes('src/supervisor/tasks/task-service.ts'));
});

test('a cycle is found where there is one', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts']],
    ['d.ts', ['a.ts']],
  ]);
  assert.deepEqual(cyclesOf(graph), ['a.ts -> b.ts -> c.ts -> a.ts']);
});

test('no import cycle in src', () => {
  assert.deepEqual(cyclesOf(importGraph()), []);
});
