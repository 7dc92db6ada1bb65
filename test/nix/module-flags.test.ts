// The NixOS module starts the daemon with flags the daemon accepts, and registers the address it serves.
// With nix-instantiate the command line comes from evaluating the module (with the stub lib, or nixpkgs'
// lib from HIVE_TEST_NIXPKGS_LIB); without it, the flags come from the module's text and the values
// from a table here. CI installs nix only in .ci/nix-check, so both ways must pass.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { runDaemonBinary, startTestDaemon } from '../helpers/daemon.js';
import { RULES_FILE } from '../helpers/prometheus.js';
import {
  evaluateModule,
  flagsOf,
  hasNixInstantiate,
  moduleFlagsFromText,
  splitCommandLine,
} from '../helpers/nix-module.js';

const NIX = hasNixInstantiate();
const WITHOUT_NIX = NIX ? false : 'nix-instantiate is not installed (.ci/nix-check installs it)';

/** A state directory of its own, with the command policy file the settings name. */
function makeStateDir(t: TestContext): string {
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-nix-'));
  t.after(() => rmSync(stateDir, { recursive: true, force: true }));
  writeFileSync(join(stateDir, 'policy.json'), JSON.stringify(POLICY));
  return stateDir;
}

const POLICY = { rules: [{ match: ['git', 'push', '--force'], decision: 'deny', reason: 'no force pushes' }] };

/** A sandbox any host here can enforce (no Landlock needed: / is writable), for the sandbox options. */
const SANDBOX = JSON.stringify({ write: ['/'], network: false });

/** Option values a test daemon can run with: any free port, a state directory of its own. */
function testSettings(stateDir: string) {
  return {
    bashHttpPort: 0,
    bashStateDir: stateDir,
    bashAgentSocket: join(stateDir, 'agent.sock'),
    bashDefaultSandbox: SANDBOX,
    bashSandboxFloor: SANDBOX,
    bashPolicyFile: join(stateDir, 'policy.json'),
    bashPolicyAskTimeout: 30,
    bashTasksMayCall: 'off',
  };
}

/** The daemon's arguments as the module renders them (evaluated), else built from the module's flags. */
function moduleCommandLine(stateDir: string): string[] {
  if (NIX) {
    const [program, ...args] = splitCommandLine(evaluateModule(testSettings(stateDir)).serviceConfig.ExecStart);
    assert.match(program!, /^\/nix\/store\/[^/]+-hive-bash-daemon\/bin\/hive-bash-daemon$/);
    return args;
  }
  const values: Record<string, string> = {
    '--host': '127.0.0.1',
    '--port': '0',
    '--state-dir': stateDir,
    '--agent-socket': join(stateDir, 'agent.sock'),
    '--default-sandbox': SANDBOX,
    '--sandbox-floor': SANDBOX,
    '--policy': join(stateDir, 'policy.json'),
    '--policy-ask-timeout': '30',
    '--tasks-may-call': 'off',
  };
  return moduleFlagsFromText().flatMap((flag) => {
    const value = values[flag];
    if (value === undefined) throw new Error(`mcp.nix passes ${flag}: give it a test value in module-flags.test.ts`);
    return [flag, value];
  });
}

test('every flag the module passes is listed by --help and the daemon serves with all of them', async (t) => {
  const stateDir = makeStateDir(t);
  const args = moduleCommandLine(stateDir);
  const flags = flagsOf(args);
  for (const required of ['--host', '--port', '--state-dir', '--agent-socket'])
    assert.ok(flags.includes(required), `the module does not pass ${required}: ${args.join(' ')}`);
  const help = await runDaemonBinary(['--help']);
  assert.equal(help.code, 0);
  for (const flag of flags) assert.match(help.stdout, new RegExp(`^  ${flag} `, 'm'), `${flag} is not in --help`);

  const daemon = await startTestDaemon(t, { stateDir, args });
  const health = await fetch(new URL('/healthz', daemon.url));
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { ok: boolean }).ok, true);
  assert.equal(await daemon.stop(), 0, daemon.stderr());
});

test('the flags read from the module text are those of its evaluated ExecStart', { skip: WITHOUT_NIX }, (t) => {
  const evaluated = splitCommandLine(evaluateModule(testSettings(makeStateDir(t))).serviceConfig.ExecStart).slice(1);
  assert.deepEqual(flagsOf(evaluated), moduleFlagsFromText());
  const withoutSocket = splitCommandLine(evaluateModule({}).serviceConfig.ExecStart);
  assert.equal(withoutSocket.includes('--agent-socket'), false, withoutSocket.join(' '));
});

test('the registered MCP url is the address the daemon is told to listen on', { skip: WITHOUT_NIX }, () => {
  const evaluated = evaluateModule({ bashHttpPort: 7999 });
  const args = splitCommandLine(evaluated.serviceConfig.ExecStart);
  const host = args[args.indexOf('--host') + 1];
  const port = args[args.indexOf('--port') + 1];
  assert.deepEqual(evaluated.mcpServer, { type: 'http', url: `http://${host}:${port}/mcp`, allowedTools: ['*'] });
  assert.equal(evaluateModule({}).mcpServer.url, 'http://127.0.0.1:7433/mcp');
});

test("an agent's own bash entry replaces the module's default one whole", { skip: WITHOUT_NIX }, () => {
  const own = { type: 'http', url: 'http://127.0.0.1:9000/mcp', allowedTools: ['run', 'status'] };
  assert.deepEqual(evaluateModule({}, { bash: own }).mcpServer, own);
});

test('the unit lets the daemon end its own tasks and gives them a cgroup subtree', { skip: WITHOUT_NIX }, () => {
  const { serviceConfig, path } = evaluateModule({});
  assert.equal(serviceConfig.KillMode, 'mixed');
  assert.equal(
    serviceConfig.Delegate,
    'cpu memory pids',
    'the delegated subtree has the controllers of the task limits',
  );
  assert.deepEqual(
    [serviceConfig.MemoryAccounting, serviceConfig.TasksAccounting, serviceConfig.CPUAccounting],
    [true, true, true],
  );
  assert.equal(
    serviceConfig.Restart,
    'always',
    'the daemon comes back however it exited; systemctl stop still stops it',
  );
  assert.equal(serviceConfig.StateDirectory, 'hive-bash-daemon');
  assert.equal(serviceConfig.NoNewPrivileges, undefined);
  assert.ok(
    path.some((entry) => entry.endsWith('-bash')),
    `bash is not on the service's path: ${path.join(' ')}`,
  );
});

test(
  'the default package is built on bashNodejs: nodejs_22 unless the option says another',
  { skip: WITHOUT_NIX },
  () => {
    assert.match(evaluateModule({}).packageNodejs ?? '', /-nodejs-22$/);
    assert.match(evaluateModule({}, {}, 'nodejs_24').packageNodejs ?? '', /-nodejs-24$/);
  },
);

test(
  "bashPrometheus registers the rules and a scrape job for the daemon's address with services.prometheus; off by default",
  { skip: WITHOUT_NIX },
  () => {
    assert.deepEqual(evaluateModule({}).prometheus, {}, 'nothing is given to services.prometheus by default');
    const evaluated = evaluateModule({ bashPrometheus: true, bashHttpPort: 7999 });
    const args = splitCommandLine(evaluated.serviceConfig.ExecStart);
    const address = `${args[args.indexOf('--host') + 1]}:${args[args.indexOf('--port') + 1]}`;
    assert.deepEqual(evaluated.prometheus.ruleFiles, [RULES_FILE]);
    assert.ok(existsSync(RULES_FILE), RULES_FILE);
    assert.deepEqual(evaluated.prometheus.scrapeConfigs, [
      { job_name: 'hive-bash-daemon', static_configs: [{ targets: [address] }] },
    ]);
  },
);
