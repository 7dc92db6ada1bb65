// hive-bash's errors: one line on stderr, never a stack trace, and the exit code of its kind
// (1 an unknown id or a refused token, 3 a daemon that cannot be reached).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { runCli } from './cli.js';

const UNKNOWN = 'no task has the id "nope"; hive-bash list shows the ids of known tasks';

test('an unknown id is one line naming it, exit 1, for every command that takes ids', async (t) => {
  const daemon = await startTestDaemon(t);
  const cases: Array<[string[], string]> = [
    [['status', 'nope'], `hive-bash status: ${UNKNOWN}\n`],
    [['follow', 'nope'], `hive-bash follow: ${UNKNOWN}\n`],
    [['wait', 'nope', '--timeout', '5'], `hive-bash wait: ${UNKNOWN}\n`],
    [['kill', 'nope'], `hive-bash kill: ${UNKNOWN}\n`],
  ];
  const results = await Promise.all(cases.map(([args]) => runCli(t, daemon.url, args)));
  results.forEach((result, index) =>
    assert.deepEqual(
      [result.code, result.stdout, result.stderr],
      [1, '', cases[index]![1]],
      cases[index]![0].join(' '),
    ),
  );
});

test('a stopped daemon is exit 3 with the URL tried', async (t) => {
  const daemon = await startTestDaemon(t);
  assert.equal((await runCli(t, daemon.url, ['ps'])).code, 0, 'it answers while it runs');
  assert.equal(await daemon.stop(), 0);
  for (const args of [['ps'], ['todos']]) {
    const result = await runCli(t, daemon.url, args);
    assert.equal(result.code, 3, args[0]);
    assert.equal(
      result.stderr,
      `hive-bash ${args[0] === 'ps' ? 'list' : args[0]}: cannot reach the daemon at ${daemon.url} (ECONNREFUSED); is it running? Give its address with --url or HIVE_BASH_URL\n`,
    );
  }
  const viaFlag = await runCli(t, null, ['--url', daemon.url, 'status', 'x']);
  assert.equal(viaFlag.code, 3, 'the --url flag is the one tried');
  assert.ok(viaFlag.stderr.includes(daemon.url));
});

test('a daemon with a token: the right one works; a missing or wrong one is exit 1 saying which', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-token-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const [right, wrong] = [join(dir, 'right'), join(dir, 'wrong')];
  writeFileSync(right, 'correct-horse\n');
  writeFileSync(wrong, 'battery-staple\n');
  const daemon = await startTestDaemon(t, { args: ['--auth-token-file', right] });
  const ok = await runCli(t, daemon.url, ['--json', 'list', '--token-file', right]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(JSON.parse(ok.stdout), { tasks: [] });
  const viaEnv = await runCli(t, daemon.url, ['todos'], { HIVE_BASH_TOKEN_FILE: right });
  assert.equal(viaEnv.code, 0, viaEnv.stderr);

  const refused = await runCli(t, daemon.url, ['list', '--token-file', wrong]);
  assert.equal(refused.code, 1);
  assert.equal(
    refused.stderr,
    `hive-bash list: the daemon at ${daemon.url} requires a bearer token and the token in ${wrong} was refused (401); give --token-file (or HIVE_BASH_TOKEN_FILE) naming the file of its --auth-token-file\n`,
  );
  const todos = await runCli(t, daemon.url, ['todos', '--token-file', wrong]);
  assert.equal(todos.code, 1);
  assert.match(
    todos.stderr,
    /^hive-bash todos: the daemon at http:\S+\/todos requires a bearer token and the token in \S+ was refused \(401\)/,
  );
  const none = await runCli(t, daemon.url, ['ps']);
  assert.equal(none.code, 1);
  assert.match(
    none.stderr,
    /^hive-bash list: the daemon at \S+ requires a bearer token and no token was sent \(401\); give --token-file/,
  );
  const missing = await runCli(t, daemon.url, ['ps', '--token-file', join(dir, 'absent')]);
  assert.deepEqual(
    [missing.code, missing.stderr],
    [
      1,
      `hive-bash list: --token-file "${join(dir, 'absent')}" cannot be read (ENOENT); it must name a readable file holding the daemon's token\n`,
    ],
  );
});
