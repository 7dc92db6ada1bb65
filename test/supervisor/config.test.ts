import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError } from '../../src/errors.js';
import { loadConfig, type Config } from '../../src/supervisor/config/config.js';
import { runDaemonBinary, startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test('bad flags and variables exit with code 2 and a message naming them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'hive-config-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = join(dir, 'token');
  execFileSync('mkfifo', [fifo]);
  const cases: Array<[string[], Record<string, string>, string]> = [
    [['--port', 'http'], {}, 'hive-bash-daemon: --port must be an integer from 0 to 65535; got "http"\n'],
    [['--port', '70000'], {}, 'hive-bash-daemon: --port must be an integer from 0 to 65535; got "70000"\n'],
    [
      [],
      { HIVE_BASH_MAX_RUNNING: '0' },
      'hive-bash-daemon: HIVE_BASH_MAX_RUNNING must be an integer from 1 to 100000; got "0"\n',
    ],
    [['--kill-grace-ms=-5'], {}, 'hive-bash-daemon: --kill-grace-ms must be an integer from 0 to 3600000; got "-5"\n'],
    [
      ['--default-timeout', 'soon'],
      {},
      'hive-bash-daemon: --default-timeout must be a positive number of seconds; got "soon"\n',
    ],
    [
      ['--log-level', 'loud'],
      {},
      'hive-bash-daemon: --log-level must be one of fatal, error, warn, info, debug, trace, silent; got "loud"\n',
    ],
    [['--max-runing', '3'], {}, 'hive-bash-daemon: unknown flag --max-runing; see --help for the flags it accepts\n'],
    [
      ['--headers-timeout-seconds', '20', '--request-timeout-seconds', '10'],
      {},
      'hive-bash-daemon: --request-timeout-seconds 10 is below --headers-timeout-seconds 20; the whole request cannot arrive before its headers\n',
    ],
    [['--port'], {}, "hive-bash-daemon: Option '--port <value>' argument missing (see --help)\n"],
    [
      ['--host', '0.0.0.0'],
      {},
      'hive-bash-daemon: --host 0.0.0.0 is reachable from other machines: set --auth-token-file too, or bind a loopback address such as 127.0.0.1\n',
    ],
    [
      ['--auth-token-file', '/no/such/token'],
      {},
      'hive-bash-daemon: --auth-token-file "/no/such/token" cannot be read: ENOENT: no such file or directory, open \'/no/such/token\'\n',
    ],
    // Refused at once, never waited on (a FIFO) or read without end (a device).
    [
      ['--auth-token-file', '/dev/zero'],
      {},
      'hive-bash-daemon: --auth-token-file "/dev/zero" is a character device, not a regular file: it takes a regular file holding the token, of at most 4 KiB\n',
    ],
    [
      ['--auth-token-file', fifo],
      {},
      `hive-bash-daemon: --auth-token-file ${JSON.stringify(fifo)} is a FIFO (a named pipe), not a regular file: it takes a regular file holding the token, of at most 4 KiB\n`,
    ],
  ];
  for (const [args, env, message] of cases) {
    const result = await runDaemonBinary(args, env);
    assert.equal(result.code, 2, `${args.join(' ')} ${JSON.stringify(env)}: ${result.stderr}`);
    assert.equal(result.stderr, message);
    assert.equal(result.stdout, '');
  }
});

test('--help lists every flag with its variable, and --version prints the version', async () => {
  const help = await runDaemonBinary(['--help']);
  assert.equal(help.code, 0);
  for (const flag of [
    '--host',
    '--port',
    '--state-dir',
    '--agent-socket',
    '--max-running',
    '--max-pending',
    '--max-pending-bytes',
    '--default-timeout',
    '--kill-grace-ms',
    '--max-output-bytes',
    '--retention-days',
    '--retention-count',
    '--auth-token-file',
  ]) {
    assert.match(help.stdout, new RegExp(`  ${flag} `), flag);
  }
  assert.match(help.stdout, /HIVE_BASH_MAX_RUNNING; default 64/);
  assert.match(help.stdout, /HIVE_AGENT_SOCKET; default none/);
  const version = await runDaemonBinary(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

test('a flag wins over its HIVE_BASH_* variable, the variable counts when no flag is given, and a bad variable is named', () => {
  // Each: the flag, its variable, a value for each that differs from the other and from the default, and one the variable refuses.
  const cases: Array<{
    flag: string;
    variable: string;
    key: keyof Config;
    byFlag: [string, unknown];
    byVariable: [string, unknown];
    invalid?: string;
    accepts?: string;
  }> = [
    {
      flag: '--port',
      variable: 'HIVE_BASH_PORT',
      key: 'port',
      byFlag: ['0', 0],
      byVariable: ['8123', 8123],
      invalid: 'http',
      accepts: 'an integer from 0 to 65535',
    },
    {
      flag: '--max-running',
      variable: 'HIVE_BASH_MAX_RUNNING',
      key: 'maxRunning',
      byFlag: ['3', 3],
      byVariable: ['5', 5],
      invalid: '0',
      accepts: 'an integer from 1 to 100000',
    },
    {
      flag: '--max-pending-bytes',
      variable: 'HIVE_BASH_MAX_PENDING_BYTES',
      key: 'maxPendingBytes',
      byFlag: ['0', 0],
      byVariable: ['1048576', 1_048_576],
      invalid: '1.5',
      accepts: 'an integer of bytes from 0 to 1099511627776',
    },
    {
      flag: '--kill-grace-ms',
      variable: 'HIVE_BASH_KILL_GRACE_MS',
      key: 'killGraceMs',
      byFlag: ['250', 250],
      byVariable: ['750', 750],
      invalid: '-5',
      accepts: 'an integer from 0 to 3600000',
    },
    {
      flag: '--default-timeout',
      variable: 'HIVE_BASH_DEFAULT_TIMEOUT',
      key: 'defaultTimeoutSeconds',
      byFlag: ['2.5', 2.5],
      byVariable: ['10', 10],
      invalid: 'soon',
      accepts: 'a positive number of seconds',
    },
    {
      flag: '--log-level',
      variable: 'HIVE_BASH_LOG_LEVEL',
      key: 'logLevel',
      byFlag: ['debug', 'debug'],
      byVariable: ['error', 'error'],
      invalid: 'loud',
      accepts: 'one of fatal, error, warn, info, debug, trace, silent',
    },
    {
      flag: '--containment',
      variable: 'HIVE_BASH_CONTAINMENT',
      key: 'containment',
      byFlag: ['node', 'node'],
      byVariable: ['process-group', 'process-group'],
      invalid: 'jail',
      accepts: 'one of auto, cgroup, process-group, node',
    },
    {
      flag: '--agent-socket',
      variable: 'HIVE_AGENT_SOCKET',
      key: 'agentSocket',
      byFlag: ['/run/flag.sock', '/run/flag.sock'],
      byVariable: ['/run/variable.sock', '/run/variable.sock'],
    },
  ];
  const load = (argv: string[], env: Record<string, string>) => loadConfig(argv, env) as Config;
  const defaults = load([], {});
  for (const { flag, variable, key, byFlag, byVariable, invalid, accepts } of cases) {
    assert.notDeepEqual(byVariable[1], defaults[key], `${variable}: the value differs from the default`);
    assert.deepEqual(
      load([flag, byFlag[0]], { [variable]: byVariable[0] })[key],
      byFlag[1],
      `${flag} wins over ${variable}`,
    );
    assert.deepEqual(load([], { [variable]: byVariable[0] })[key], byVariable[1], `${variable} counts without ${flag}`);
    if (invalid === undefined) continue;
    assert.deepEqual(
      load([flag, byFlag[0]], { [variable]: invalid })[key],
      byFlag[1],
      `with ${flag} given, ${variable} is not read`,
    );
    assert.throws(
      () => load([], { [variable]: invalid }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.message, `${variable} must be ${accepts}; got ${JSON.stringify(invalid)}`);
        return true;
      },
    );
  }
});

test('the daemon binary takes a flag over its variable and a variable without its flag', async (t) => {
  const daemon = await startTestDaemon(t, {
    args: ['--max-output-bytes', '3'],
    env: { HIVE_BASH_MAX_OUTPUT_BYTES: 'not a number', HIVE_BASH_MAX_RUNNING: '2' },
  });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'echo abcdef' });
  assert.equal(task.stdout_tail, 'abc');
  assert.equal(task.stdout_truncated, true);
  // HIVE_BASH_MAX_RUNNING=2 with no flag: a third task waits.
  for (const name of ['one', 'two'])
    assert.equal((await tools.ok('run', { command: 'sleep 60', name, wait_seconds: 0 })).state, 'running');
  assert.equal((await tools.ok('run', { command: 'sleep 60', name: 'three', wait_seconds: 0 })).state, 'pending');
});
