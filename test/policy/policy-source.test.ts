// The policy file is looked at before it is read: a FIFO, a device, a file past 16 MiB, or rules
// that compile past what a task's shim reads stop the start at once with exit 2 and what the file
// is; a key given twice in one object is refused naming it and where, not taken silently.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runDaemonBinary } from '../helpers/daemon.js';
import { parseCommandPolicy } from '../../src/shared/command-policy.js';

const ACCEPTS = 'it takes a regular file of JSON of at most 16 MiB (16777216 bytes)';

function scratch(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hive-policy-source-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The daemon's last stderr line and exit code for --policy `file`. */
async function startWith(dir: string, file: string): Promise<[number | null, string]> {
  const result = await runDaemonBinary(['--port', '0', '--state-dir', join(dir, 'state'), '--policy', file]);
  return [result.code, result.stderr.trim().split('\n').at(-1)!];
}

test('a FIFO, a device or a policy past 16 MiB stops the start at once, saying what the file is', async (t) => {
  const dir = scratch(t);
  const fifo = join(dir, 'fifo.json');
  execFileSync('mkfifo', [fifo]);
  const large = join(dir, 'large.json');
  writeFileSync(large, `{"rules": []}${' '.repeat(25 * 1024 * 1024)}`);
  const cases: Array<[string, string]> = [
    [fifo, `is a FIFO (a named pipe), not a regular file: ${ACCEPTS}`],
    ['/dev/zero', `is a character device, not a regular file: ${ACCEPTS}`],
    [dir, `is a directory, not a regular file: ${ACCEPTS}`],
    [large, `is ${25 * 1024 * 1024 + 13} bytes: ${ACCEPTS}`],
  ];
  for (const [file, message] of cases)
    assert.deepEqual(await startWith(dir, file), [2, `hive-bash-daemon: --policy ${JSON.stringify(file)} ${message}`]);
});

test('rules that compile past what a task’s shim reads stop the start', async (t) => {
  const dir = scratch(t);
  const file = join(dir, 'policy.json');
  const words = Array.from({ length: 63 }, (_, i) => `argument-number-${i}-of-many`);
  const rules = Array.from({ length: 5000 }, (_, i) => ({
    match: [`tool-${i}`, ...words],
    decision: 'deny',
    reason: 'r',
  }));
  writeFileSync(file, JSON.stringify({ rules }));
  const [code, line] = await startWith(dir, file);
  assert.equal(code, 2);
  assert.match(
    line,
    /^hive-bash-daemon: --policy ".*": its rules compile to \d+ bytes for the tasks' shims, which read at most 16777216; it takes fewer or shorter rules$/,
  );
});

test('a key given twice in one object is refused, naming it and where the second is', async (t) => {
  const cases: Array<[string, string]> = [
    [
      '{"rules": [\n  {"match": ["git"], "decision": "allow", "reason": "r", "decision": "deny"}\n]}',
      'rules[0].decision is given twice (again at line 2, column 58): each field is given once',
    ],
    [
      '{"rules": [], "default": "deny", "rules": []}',
      'rules is given twice (again at line 1, column 34): each field is given once',
    ],
    [
      '{"rules": [{"match": ["a"], "decision": "deny", "reason": "r"}, {"match": ["b"], "decision": "deny", "reason": "r", "r\\u0065ason": "s"}]}',
      'rules[1].reason is given twice (again at line 1, column 117): each field is given once',
    ],
  ];
  for (const [text, message] of cases) assert.throws(() => parseCommandPolicy(text), { message });
  assert.doesNotThrow(() =>
    parseCommandPolicy('{"rules": [{"match": ["a", "a"], "decision": "deny", "reason": "a"}]}'),
  );
  const dir = scratch(t);
  const file = join(dir, 'policy.json');
  writeFileSync(file, cases[1]![0]);
  assert.deepEqual(await startWith(dir, file), [
    2,
    `hive-bash-daemon: --policy ${JSON.stringify(file)}: ${cases[1]![1]}`,
  ]);
});
