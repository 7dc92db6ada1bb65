// What a task or a client chose (a command, an exec's argv, an output's tail, a value echoed in an
// error) reaches a person's terminal with its control and invisible characters escaped, so that no
// escape sequence can redraw what the person reads; --json keeps the text exact.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestDaemon } from '../helpers/daemon.js';
import { modernRequest } from '../helpers/modern-client.js';
import { waitFor } from '../helpers/processes.js';
import { startPolicyDaemon, waitForApprovals } from '../policy/policy-daemon.js';
import { awaitGate, makeGate, runCli } from './cli.js';

/** 33 columns back, then erase to the end of the line: what hides the text before it. */
const SPOOF = '\x1b[33D\x1b[K';
/** A raw control or invisible character: anything a terminal acts on but a newline. */
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const RAW_CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

function assertNoRawControl(text: string, what: string): void {
  assert.doesNotMatch(text, RAW_CONTROL, `${what} holds a raw control character: ${JSON.stringify(text)}`);
}

test('a task whose command and output hold escapes: list, status, top, run and an error line show them escaped, --json exactly', async (t) => {
  const daemon = await startTestDaemon(t);
  const gate = makeGate(t);
  const cli = (...args: string[]) => runCli(t, daemon.url, args);
  const comment = `# --registry=https://evil.example/${SPOOF}--dry-run\x07\u202e`;
  const shownComment = '# --registry=https://evil.example/\\e[33D\\e[K--dry-run\\a\\u202e';
  const command = `printf 'out\\033[2A\\033[Kput\\007\\n'; ${awaitGate(gate)} ${comment}`;
  assert.equal((await cli('run', '--name', 'spoof', '--detach', '--', command)).code, 0);
  const written = await waitFor(async () => {
    const status = JSON.parse((await cli('--json', 'status', 'spoof')).stdout);
    return status.stdout_bytes > 0 ? status : null;
  }, 30_000);
  assert.equal(written?.command, command, 'status --json has the command exactly');

  const list = await cli('list');
  assert.equal(list.code, 0, list.stderr);
  assertNoRawControl(list.stdout, 'list');
  assert.ok(list.stdout.includes(shownComment), list.stdout);
  assert.equal(JSON.parse((await cli('--json', 'list')).stdout).tasks[0].command, command);

  const status = await cli('status', 'spoof');
  assertNoRawControl(status.stdout, 'status');
  assert.match(status.stdout, /^command +printf 'out\\033\[2A\\033\[Kput\\007\\n'; while .* # --registry=/m);
  assert.ok(status.stdout.includes(shownComment), status.stdout);
  assert.ok(status.stdout.includes('\n--- stdout (all of it) ---\nout\\e[2A\\e[Kput\\a\n'), status.stdout);

  const top = await cli('top', '--once');
  assertNoRawControl(top.stdout, 'top');
  assert.ok(top.stdout.includes(shownComment), top.stdout);

  const run = await cli('run', '--name', 'bell', '--wait', '20', '--', "printf 'a\\033[Kb\\007\\n\\tc\\n'");
  assert.equal(
    run.stdout.replace(/after \S+/, 'after T'),
    'bell\ndone: exit 0 after T\n--- stdout ---\na\\e[Kb\\a\n\tc\n',
  );

  const refused = await cli('status', 'no\u009bsuch\u202eid');
  assert.equal(refused.code, 1);
  assertNoRawControl(refused.stderr, 'the error line');
  assert.ok(refused.stderr.includes('no\\x9bsuch\\u202eid'), refused.stderr);
});

test('an exec that waits for approval with escapes in its argv: the form a client is asked with, approvals and deny show them escaped', async (t) => {
  const daemon = await startPolicyDaemon(t);
  const command = `hive-asked $'--registry=https://evil.example/\\e[33D\\e[K--dry-run\\a'`;
  const exact = `hive-asked '--registry=https://evil.example/${SPOOF}--dry-run\x07'`;
  const shown = "hive-asked '--registry=https://evil.example/\\e[33D\\e[K--dry-run\\a'";
  const asked = await modernRequest(
    daemon.url,
    'tools/call',
    { name: 'run', arguments: { command, name: 'publish', env: daemon.env, wait_seconds: 30 } },
    { capabilities: { elicitation: { form: {} } } },
  );
  assert.equal(asked.body.result?.resultType, 'input_required', JSON.stringify(asked.body));
  const forms = Object.values<{ params: { message: string } }>(asked.body.result.inputRequests);
  assert.deepEqual(
    forms.map((form) => form.params.message),
    [
      `Allow \`${shown}\`? (rule: a person decides) Task publish runs ${daemon.dir}/hive-asked; accept runs it, decline refuses it.`,
    ],
  );
  const [waiting] = await waitForApprovals(daemon, 'publish');
  assert.equal(waiting!.command, exact, 'GET /approvals has the command exactly');

  const cli = (...args: string[]) => runCli(t, daemon.url, args);
  const approvals = await cli('approvals');
  assert.equal(approvals.code, 0, approvals.stderr);
  assertNoRawControl(approvals.stdout, 'approvals');
  assert.ok(approvals.stdout.includes(`${shown}  rule 1: a person decides`), approvals.stdout);
  assert.equal(JSON.parse((await cli('--json', 'approvals')).stdout).approvals[0].command, exact);

  const denied = await cli('deny', waiting!.id);
  assert.deepEqual([denied.code, denied.stdout], [0, `denied ${waiting!.id}: ${shown} (task publish)\n`]);
});
