import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runDaemonBinary, startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

test('bad flags and variables exit with code 2 and a message naming them', async () => {
  const cases: Array<[string[], Record<string, string>, string]> = [
    [['--port', 'http'], {}, 'hive-bash-daemon: --port must be an integer from 0 to 65535; got "http"\n'],
    [['--port', '70000'], {}, 'hive-bash-daemon: --port must be an integer from 0 to 65535; got "70000"\n'],
    [[], { HIVE_BASH_MAX_RUNNING: '0' }, 'hive-bash-daemon: HIVE_BASH_MAX_RUNNING must be an integer from 1 to 100000; got "0"\n'],
    [['--kill-grace-ms=-5'], {}, 'hive-bash-daemon: --kill-grace-ms must be an integer from 0 to 3600000; got "-5"\n'],
    [['--default-timeout', 'soon'], {}, 'hive-bash-daemon: --default-timeout must be a positive number of seconds; got "soon"\n'],
    [['--log-level', 'loud'], {}, 'hive-bash-daemon: --log-level must be one of fatal, error, warn, info, debug, trace, silent; got "loud"\n'],
    [['--max-runing', '3'], {}, 'hive-bash-daemon: unknown flag --max-runing; see --help for the flags it accepts\n'],
    [['--port'], {}, "hive-bash-daemon: Option '--port <value>' argument missing (see --help)\n"],
    [['--host', '0.0.0.0'], {}, 'hive-bash-daemon: --host 0.0.0.0 is reachable from other machines: set --auth-token-file too, or bind a loopback address such as 127.0.0.1\n'],
    [['--auth-token-file', '/no/such/token'], {}, 'hive-bash-daemon: --auth-token-file "/no/such/token" cannot be read: ENOENT: no such file or directory, open \'/no/such/token\'\n'],
  ];
  for (const [args, env, message] of cases) {
    const result = await runDaemonBinary(args, env);
    assert.equal(result.code, 2, `${args.join(' ')} ${JSON.stringify(env)}: ${result.stderr}`);
    assert.equal(result.stderr, message);
    assert.equal(result.stdout, '');
  }
});

test('flags win over variables, and --help lists every flag with its variable', async () => {
  const help = await runDaemonBinary(['--help']);
  assert.equal(help.code, 0);
  for (const flag of ['--host', '--port', '--state-dir', '--agent-socket', '--max-running', '--max-pending', '--default-timeout', '--kill-grace-ms', '--max-output-bytes', '--retention-days', '--retention-count', '--auth-token-file']) {
    assert.match(help.stdout, new RegExp(`  ${flag} `), flag);
  }
  assert.match(help.stdout, /HIVE_BASH_MAX_RUNNING; default 64/);
  assert.match(help.stdout, /HIVE_AGENT_SOCKET; default none/);
  const version = await runDaemonBinary(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});

test('a flag wins over its variable', async (t) => {
  const daemon = await startTestDaemon(t, { args: ['--max-output-bytes', '3'], env: { HIVE_BASH_MAX_OUTPUT_BYTES: 'not a number', HIVE_BASH_MAX_RUNNING: '2' } });
  const tools = await connectClient(t, daemon.url);
  const task = await tools.ok('run', { command: 'echo abcdef' });
  assert.equal(task.stdout_tail, 'abc');
  assert.equal(task.stdout_truncated, true);
});
