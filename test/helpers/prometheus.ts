// Debian's Prometheus for the tests of deploy/prometheus/: promtool, and a real server of the
// test's own (a free port, a storage folder of its own, nothing else read or written), killed at
// the test's end even when the test fails, and with the test process should that die first.
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { REPO_ROOT } from './nix-module.js';
import { waitFor } from './processes.js';

export const RULES_DIR = join(REPO_ROOT, 'deploy/prometheus');
export const RULES_FILE = join(RULES_DIR, 'hive-bash.rules.yml');

const runs = (command: string) => spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;

/**
 * Why the Prometheus tests cannot run here, or false. In CI (CI=true) they always run, and fail
 * where the binaries are missing: .ci/run installs them (.ci/install-prometheus).
 */
export const PROMETHEUS_MISSING =
  process.env.CI === 'true' || (runs('promtool') && runs('prometheus'))
    ? false
    : "Debian's prometheus package (prometheus, promtool) is not installed: .ci/install-prometheus installs it";

/** Runs promtool with `args` (and `input` on stdin); its exit code and output. */
export function promtool(args: string[], input?: string): { code: number | null; output: string } {
  const result = spawnSync('promtool', args, { input, encoding: 'utf8', cwd: RULES_DIR });
  if (result.error !== undefined) return { code: null, output: `promtool: ${result.error.message}` };
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

export interface RunningPrometheus {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** GET /api/v1/PATH with `params`; the `data` of a success. */
  api(path: string, params?: Record<string, string>): Promise<any>;
  log(): string;
}

/**
 * Starts Prometheus with `config` (YAML text) on a free loopback port and waits until it is ready.
 * Under setpriv --pdeathsig where util-linux has it, so that it dies with this process whatever ends it.
 */
export async function startPrometheus(t: TestContext, config: string): Promise<RunningPrometheus> {
  if (!runs('prometheus')) throw new Error('prometheus is not installed: .ci/install-prometheus installs it');
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, config);
  const origin = `http://127.0.0.1:${await freePort()}`;
  const args = [
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=${origin.slice('http://'.length)}`,
  ];
  const command = runs('setpriv')
    ? ['setpriv', '--pdeathsig', 'KILL', '--', 'prometheus', ...args]
    : ['prometheus', ...args];
  const server = spawn(command[0]!, command.slice(1), { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  server.stderr.setEncoding('utf8').on('data', (text: string) => (log += text));
  t.after(async () => {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGKILL');
      await once(server, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const ready = await waitFor(async () => {
    if (server.exitCode !== null) throw new Error(`prometheus exited with ${server.exitCode}:\n${log}`);
    return (await fetch(`${origin}/-/ready`).catch(() => null))?.ok === true;
  }, 60_000);
  if (!ready) throw new Error(`prometheus did not get ready at ${origin}:\n${log}`);
  return {
    origin,
    async api(path, params = {}) {
      const body = (await (
        await fetch(`${origin}/api/v1/${path}?${new URLSearchParams(params).toString()}`)
      ).json()) as any;
      if (body.status !== 'success') throw new Error(`prometheus ${path}: ${JSON.stringify(body)}`);
      return body.data;
    },
    log: () => log,
  };
}
