// .ci/check-commit-subjects, run in a throwaway git repository: it fails on each commit after the
// base whose subject is over 72 characters, naming it, checks HEAD alone when the base is not in
// the clone, and checks one message file as the commit-msg hook gives it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeScratchDir } from '../helpers/scratch.js';

const SCRIPT = fileURLToPath(new URL('../../../.ci/check-commit-subjects', import.meta.url));
const HOOK = fileURLToPath(new URL('../../../.githooks/commit-msg', import.meta.url));
const LONG = `Add a feature whose subject goes on to say everything that the body should say instead`;
const SHORT = 'Add a feature';
const EXACT = 'é'.repeat(72); // 72 characters, 144 bytes

function run(command: string, args: string[], cwd: string) {
  const result = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  });
  return { status: result.status, out: result.stdout + result.stderr };
}

/** A repository whose commits have these subjects, oldest first; returns it and each commit's hash. */
function repository(t: TestContext, subjects: string[]): { dir: string; hashes: string[] } {
  const dir = makeScratchDir(t, 'subjects');
  assert.equal(run('git', ['init', '-q'], dir).status, 0);
  const hashes = subjects.map((subject) => {
    assert.equal(run('git', ['commit', '-q', '--allow-empty', '-m', subject, '-m', 'the body'], dir).status, 0);
    return run('git', ['rev-parse', '--short', 'HEAD'], dir).out.trim();
  });
  return { dir, hashes };
}

test('a subject over 72 characters after the base fails, named; the base and older ones are not checked', (t) => {
  const { dir, hashes } = repository(t, [LONG, SHORT, LONG, EXACT, SHORT]);
  const result = run(SCRIPT, ['--base', hashes[1]!], dir);
  assert.equal(result.status, 1, result.out);
  assert.ok(result.out.includes(`${hashes[2]}: ${LONG.length} characters: ${LONG}`), result.out);
  assert.ok(!result.out.includes(hashes[0]!), result.out);
  assert.ok(!result.out.includes(hashes[3]!), `72 characters of two bytes each pass: ${result.out}`);
  assert.match(result.out, /1 subject\(s\) over 72 characters/);
  assert.equal(run(SCRIPT, ['--base', hashes[2]!], dir).status, 0);
});

test('without the base in the clone it checks HEAD alone', (t) => {
  const { dir } = repository(t, [LONG, SHORT]);
  const passed = run(SCRIPT, [], dir);
  assert.equal(passed.status, 0, passed.out);
  assert.match(passed.out, /fdf4ae0 is not in this clone; checking HEAD only/);
  assert.equal(run('git', ['commit', '-q', '--allow-empty', '-m', LONG], dir).status, 0);
  assert.equal(run(SCRIPT, [], dir).status, 1);
});

test('the commit-msg hook checks the subject of one message, comments left out', (t) => {
  const dir = makeScratchDir(t, 'subjects');
  assert.equal(run('git', ['init', '-q'], dir).status, 0);
  const message = join(dir, 'COMMIT_EDITMSG');
  writeFileSync(message, `# ${LONG}\n\n${SHORT}\n\n${LONG}\n`);
  assert.equal(run(HOOK, [message], dir).status, 0);
  const subject = `${SHORT} and a second line of the same paragraph, which git joins into the subject`;
  writeFileSync(message, `${SHORT} and a second line\nof the same paragraph, which git joins into the subject\n`);
  const refused = run(HOOK, [message], dir);
  assert.equal(refused.status, 1, refused.out);
  assert.ok(refused.out.includes(`${subject.length} characters: ${subject}\n`), refused.out);
});
