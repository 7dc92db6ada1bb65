// The layout's rules, read from the sources' imports, so that they stay true.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const SRC = join(ROOT, 'src');

interface SourceFile {
  /** Relative to the repository: src/supervisor/daemon.ts */
  path: string;
  text: string;
  /** The files it imports, relative to the repository, as .ts paths. */
  imports: string[];
}

function listSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listSources(path);
    return /\.c?ts$/.test(entry.name) ? [path] : [];
  });
}

function readSource(path: string): SourceFile {
  const text = readFileSync(path, 'utf8');
  const imports: string[] = [];
  for (const match of text.matchAll(/^(?:import|export)\s[^;]*?\sfrom\s+'(\.[^']+)'/gms)) {
    imports.push(relative(ROOT, resolve(dirname(path), match[1]!)).replace(/\.(c?)js$/, '.$1ts'));
  }
  return { path: relative(ROOT, path), text, imports };
}

const SOURCES = listSources(SRC).map(readSource);

/** Each import of a file under `from` that lands under `to`, except those `allowed`. */
function crossings(from: string, to: string, allowed: string[] = []): string[] {
  return SOURCES.filter((file) => file.path.startsWith(from)).flatMap((file) =>
    file.imports
      .filter((target) => target.startsWith(to) && !allowed.includes(target))
      .map((target) => `${file.path} imports ${target}`),
  );
}

test('the sources were found and their imports read', () => {
  assert.ok(SOURCES.length > 40, `only ${SOURCES.length} source files under ${SRC}`);
  const daemon = SOURCES.find((file) => file.path === 'src/supervisor/daemon.ts');
  assert.ok(daemon?.imports.includes('src/supervisor/tasks/task-service.ts'), 'daemon.ts imports the task service');
});

test('the supervisor imports nothing of src/workers/ but the protocol', () => {
  assert.deepEqual(crossings('src/supervisor/', 'src/workers/', ['src/workers/protocol.ts']), []);
});

test('worker code imports nothing of the supervisor', () => {
  assert.deepEqual(crossings('src/workers/', 'src/supervisor/'), []);
});

test('the process layer imports neither the supervisor nor the workers', () => {
  assert.deepEqual([...crossings('src/process/', 'src/supervisor/'), ...crossings('src/process/', 'src/workers/')], []);
});

test('nothing below the MCP and HTTP layers imports them', () => {
  const lower = ['model', 'registry', 'tasks', 'todos', 'output', 'readiness'].map(
    (folder) => `src/supervisor/${folder}/`,
  );
  const found = lower.flatMap((folder) => [
    ...crossings(folder, 'src/supervisor/mcp/'),
    ...crossings(folder, 'src/supervisor/http/'),
  ]);
  assert.deepEqual(found, []);
});

test('the task model stands on nothing of storage, orchestration or todos', () => {
  const found = ['registry', 'tasks', 'todos'].flatMap((folder) =>
    crossings('src/supervisor/model/', `src/supervisor/${folder}/`),
  );
  assert.deepEqual(found, []);
});

/** Policies the daemon's config reads (limits, sandboxes, the tasks' environment): functions of their inputs, no state. */
const POLICY_MODULES = ['task-environment.ts', 'task-limits.ts', 'task-sandbox.ts'].map(
  (file) => `src/supervisor/tasks/${file}`,
);

test('the task service keeps its state: outside src/supervisor/tasks/ only the service, its events and the policies are imported', () => {
  const allowed = ['task-service.ts', 'task-events.ts'].map((file) => `src/supervisor/tasks/${file}`);
  const outside = SOURCES.filter((file) => !file.path.startsWith('src/supervisor/tasks/')).flatMap((file) =>
    file.imports
      .filter((target) => target.startsWith('src/supervisor/tasks/task-') || target.endsWith('/tasks/live-task.ts'))
      .filter((target) => !allowed.includes(target) && !POLICY_MODULES.includes(target))
      .map((target) => `${file.path} imports ${target}`),
  );
  assert.deepEqual(outside, []);
});

test('readiness stands on the tasks: nothing below it imports it', () => {
  const found = ['model', 'registry', 'tasks', 'todos', 'output'].flatMap((folder) =>
    crossings(`src/supervisor/${folder}/`, 'src/supervisor/readiness/'),
  );
  assert.deepEqual(found, []);
});

test('the reference harness, the CLI and the daemon share only src/shared/: the harness and the daemon import nothing of each other', () => {
  const harness = ['src/supervisor/', 'src/process/', 'src/workers/', 'src/cli/'].flatMap((to) =>
    crossings('src/agent-socket/', to),
  );
  const daemon = ['src/supervisor/', 'src/process/', 'src/workers/', 'src/cli/'].flatMap((from) =>
    crossings(from, 'src/agent-socket/'),
  );
  const shared = ['src/supervisor/', 'src/process/', 'src/workers/', 'src/cli/', 'src/agent-socket/'].flatMap((to) =>
    crossings('src/shared/', to),
  );
  assert.deepEqual([...harness, ...daemon, ...shared], []);
});

test("the CLI reaches the daemon only through MCP: it imports the model's words and constants, nothing that runs tasks", () => {
  const inner = [
    'src/workers/',
    ...['registry', 'tasks', 'todos', 'mcp', 'http', 'readiness', 'output'].map(
      (folder) => `src/supervisor/${folder}/`,
    ),
  ];
  assert.deepEqual(
    inner.flatMap((to) => crossings('src/cli/', to)),
    [],
  );
});

test('every source file opens with a line that says what it is for', () => {
  const silent = SOURCES.filter((file) => {
    const lines = file.text.split('\n');
    const first = lines[0]!.startsWith('#!') ? lines[1]! : lines[0]!;
    return !/^\/\/ \S.{10,}/.test(first);
  });
  assert.deepEqual(
    silent.map((file) => file.path),
    [],
  );
});
