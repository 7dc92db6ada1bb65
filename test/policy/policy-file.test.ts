// The policy file: each mistake named with its rule's index and field (and the daemon refusing to
// start on one); the matcher's rules (a prefix of the words, the strictest decision, the default,
// programs by name or path); hive-bash policy and policy check; the file out of tasks' reach.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../cli/cli.js';
import { runDaemonBinary } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { matchExec, parseCommandPolicy, resolvePrograms } from '../../src/shared/command-policy.js';
import { POLICY, startPolicyDaemon } from './policy-daemon.js';

const rule = (match: unknown[], decision = 'deny', reason = 'r') => ({ match, decision, reason });
const policyText = (rules: unknown[], extra: object = {}) => JSON.stringify({ ...extra, rules });

test('each mistake in a policy file is named by its rule, its field and what it takes', () => {
  const cases: Array<[string, string]> = [
    [
      policyText([rule(['git']), rule(['a']), rule(['git', 'push'], 'block')]),
      'rules[2].decision must be "allow", "ask" or "deny"; got "block" (string)',
    ],
    [
      policyText([rule([])]),
      'rules[0].match must be an array of 1 to 64 words: the program, then the first arguments it matches; got [] (array)',
    ],
    [
      policyText([rule(['bin/git'])]),
      'rules[0].match[0] must be a program: a file name (git) or an absolute path (/usr/bin/git), or an array of them; got "bin/git" (string)',
    ],
    [
      policyText([rule(['git', ['push', 4]])]),
      'rules[0].match[1] must be an argument (a string without NUL) or an array of alternative arguments; got ["push",4] (array)',
    ],
    [
      policyText([{ match: ['git'], decision: 'deny' }]),
      'rules[0].reason is required: one line of 1 to 200 characters, shown to the agent',
    ],
    [
      policyText([rule(['git'], 'deny', 'two\nlines')]),
      'rules[0].reason must be one line of 1 to 200 characters, shown to the agent; got "two\\nlines" (string)',
    ],
    [
      policyText([{ ...rule(['git']), when: 'always' }]),
      'rules[0] has unknown field "when"; it takes "match", "decision" and "reason"',
    ],
    [
      policyText([], { default: 'maybe' }),
      'default must be "allow", "ask" or "deny" (what no rule matches gets; default "allow"); got "maybe" (string)',
    ],
  ];
  for (const [text, message] of cases) assert.throws(() => parseCommandPolicy(text), { message });
});

test("the docs' example policy is one the daemon takes", () => {
  const page = readFileSync(new URL('../../../docs/sandbox-and-policy.md', import.meta.url), 'utf8');
  const section = page.slice(page.indexOf('## Command policy'));
  const example = /```json\n([\s\S]*?)```/.exec(section)![1]!;
  const policy = parseCommandPolicy(example);
  const exec = (argv: string[]) => ({ path: `/usr/bin/${argv[0]}`, real: `/usr/bin/${argv[0]}`, argv });
  assert.equal(matchExec(policy, exec(['git', 'push', '-f', 'origin'])).decision, 'deny');
  assert.equal(matchExec(policy, exec(['npm', 'publish'])).decision, 'ask');
  assert.equal(matchExec(policy, exec(['git', 'status'])).decision, 'allow');
});

test('the strictest matching rule decides, by a prefix of the words; the default decides the rest', () => {
  const policy = parseCommandPolicy(
    policyText(
      [
        rule(['git', 'push'], 'ask', 'pushes are asked about'),
        rule(['git', ['push', 'fetch'], '--force'], 'deny', 'no force'),
        rule(['git'], 'allow', 'git is fine'),
        rule(['/usr/local/bin/tool'], 'deny', 'by path'),
      ],
      { default: 'deny' },
    ),
  );
  const verdict = (argv: string[], path = `/usr/bin/${argv[0]}`, real: string | null = path) =>
    matchExec(policy, { path, real, argv });
  assert.deepEqual(verdict(['git', 'push', '--force', 'origin']), { decision: 'deny', rule: 1, matched: [0, 1, 2] });
  assert.deepEqual(verdict(['git', 'fetch', '--force']), { decision: 'deny', rule: 1, matched: [1, 2] });
  assert.deepEqual(verdict(['git', 'push', 'origin', '--force']), { decision: 'ask', rule: 0, matched: [0, 2] });
  assert.deepEqual(verdict(['git', 'status']), { decision: 'allow', rule: 2, matched: [2] });
  assert.deepEqual(verdict(['git']), { decision: 'allow', rule: 2, matched: [2] }, 'a longer rule needs its words');
  assert.deepEqual(
    verdict(['gitk']),
    { decision: 'deny', rule: null, matched: [] },
    "the default: an allow-list's deny",
  );
  assert.deepEqual(verdict(['tool'], '/usr/local/bin/tool').rule, 3, 'an absolute path matches that path');
  assert.deepEqual(verdict(['tool'], '/opt/tool').rule, null, 'and no other file of that name');
  assert.equal(verdict(['g'], '/tmp/g', '/usr/bin/git').rule, 2, 'a name matches the file a link resolves to');
  const resolved = resolvePrograms(policy, (path) => (path === '/usr/local/bin/tool' ? '/opt/tool-1.2' : null));
  assert.equal(matchExec(resolved, { path: '/opt/tool-1.2', real: '/opt/tool-1.2', argv: ['x'] }).rule, 3);
});

test('the daemon does not start on a policy it cannot use', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hive-policy-file-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'policy.json');
  writeFileSync(file, policyText([rule(['git']), rule(['git', 'push'], 'block')]));
  const state = ['--port', '0', '--state-dir', join(dir, 'state')];
  const bad = await runDaemonBinary([...state, '--policy', file]);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr.trim().split('\n').at(-1),
    `hive-bash-daemon: --policy ${JSON.stringify(file)}: rules[1].decision must be "allow", "ask" or "deny"; got "block" (string)`,
  );
  writeFileSync(file, JSON.stringify(POLICY));
  const node = await runDaemonBinary([...state, '--policy', file, '--containment', 'node']);
  assert.equal(node.code, 2);
  assert.match(
    node.stderr,
    /--policy ".*" needs the native spawner, whose per-task shim holds each task's exec filter/,
  );
});

test('hive-bash policy check decides as the daemon does: for a file, or for the daemon, exit 0, 4 or 5', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const file = join(daemon.dir, 'policy.json');
  const link = join(daemon.dir, 'renamed');
  symlinkSync(join(daemon.dir, 'hive-guarded'), link);
  const check = (args: string[], url: string | null = null) =>
    runCli(t, url, ['policy', 'check', ...args], { PATH: daemon.env.PATH });
  const denied = await check(['--file', file, '--', 'hive-guarded', 'push', '--force', 'x']);
  assert.deepEqual(
    [denied.code, denied.stdout],
    [5, `deny: rule 0 (hive-guarded push --force): no force pushes\nprogram: ${daemon.dir}/hive-guarded\n`],
  );
  const asked = await check(['--', 'hive-asked'], daemon.url);
  assert.equal(asked.code, 4);
  assert.match(asked.stdout, /^ask: rule 1 \(hive-asked\): a person decides$/m);
  const linked = await check(['--file', file, '--json', '--', link, 'push', '--force']);
  assert.equal(linked.code, 5, 'a link is matched by the file it resolves to');
  assert.deepEqual(JSON.parse(linked.stdout).program, { path: link, real: join(daemon.dir, 'hive-guarded') });
  const allowed = await check(['--', 'hive-guarded', 'push'], daemon.url);
  assert.deepEqual(
    [allowed.code, allowed.stdout.split('\n')[0]],
    [0, "allow: the policy's default: no rule matches it"],
  );
  const shown = await runCli(t, daemon.url, ['policy']);
  assert.equal(
    shown.stdout,
    [
      `${file}: default allow; asks wait 600 s`,
      'RULE  DECISION  MATCH                      REASON',
      '   0  deny      hive-guarded push --force  no force pushes',
      '   1  ask       hive-asked                 a person decides',
      '',
    ].join('\n'),
  );
  const health = (await (await fetch(new URL('/healthz', daemon.url))).json()) as { policy: { rules: unknown[] } };
  assert.equal(health.policy.rules.length, 2);
  // The policy file is hidden from tasks as the token is (the tasks' namespace binds /dev/null over it).
  const tools = await connectClient(t, daemon.url);
  const read = await tools.ok('run', { command: `wc -c < ${file}` });
  assert.equal(read.stdout_tail, '0\n');
});
