#!/usr/bin/env -S node --enable-experimental-regexp-engine --enable-experimental-regexp-engine-on-excessive-backtracks --max-semi-space-size=8 --heap-growing-percent=50
// hive-bash-daemon: parse the configuration, check V8's regexp engine, start the daemon, stop it
// cleanly on SIGTERM or SIGINT. The shebang passes Node the flags the engine needs (REGEXP_ENGINE_FLAGS
// in readiness/wait-pattern.ts) and the heap's bounds (HEAP_FLAGS in heap-flags.ts) when this file
// runs as the command npm links or installs; `env -S` splits them into words.
import { ConfigError, StateDirBusyError } from '../errors.js';
import { helpText, loadConfig, type Config } from './config/config.js';
import { VERSION } from '../shared/version.js';
import { isLoopbackHost } from './http/guard.js';
import { readRegularFile, TOKEN_FILE } from '../shared/regular-file.js';
import { checkRegexpEngine } from './readiness/wait-pattern.js';

const EXIT_USAGE = 2;

// Before anything else runs: `pkill node` and `killall node`, an agent's habits, must not match the
// daemon. Node sets both the name the kernel shows (comm) and the command line (libuv rewrites argv).
process.title = 'hive-bash-daemon';

async function main(): Promise<void> {
  let config: Config;
  let token: string | null;
  try {
    const loaded = loadConfig(process.argv.slice(2), process.env);
    if (loaded === 'help') return void process.stdout.write(`${helpText()}\n`);
    if (loaded === 'version') return void process.stdout.write(`${VERSION}\n`);
    config = loaded;
    checkRegexpEngine();
    token = readToken(config);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`hive-bash-daemon: ${error.message}\n`);
    process.exit(EXIT_USAGE);
  }
  // A Linux install must have its native parts: without them it could not contain a task.
  if (process.platform === 'linux') {
    const broken = (await import('../process/install-check.js')).findBrokenNativePart();
    if (broken !== null) {
      process.stderr.write(`hive-bash-daemon: ${broken}\n`);
      process.exit(1);
    }
  }
  const { execUnderDaemonInit, needsDaemonInit } = await import('../process/daemon-init.js');
  // As PID 1 the daemon runs again under an init of its own, and this process is replaced by it.
  const underInit = needsDaemonInit() ? execUnderDaemonInit() : null;
  // Only now the daemon's modules (most of its start): --help, --version and a refused flag need none.
  const [{ createLogger }, { startDaemon }] = await Promise.all([import('./log.js'), import('./daemon.js')]);
  const log = createLogger(config.logLevel);
  if (underInit !== null)
    log.warn(
      { reason: underInit },
      'the daemon is PID 1 and could not put hive-daemon-init above itself: the orphans its PID namespace hands it stay zombies',
    );
  let daemon;
  try {
    daemon = await startDaemon(config, token, log);
  } catch (error) {
    log.fatal({ err: error }, 'could not start');
    process.stderr.write(`hive-bash-daemon: ${(error as Error).message}\n`);
    process.exit(error instanceof StateDirBusyError || error instanceof ConfigError ? EXIT_USAGE : 1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping');
    daemon.stop().then(
      () => process.exit(0),
      (error: Error) => {
        log.fatal({ err: error }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Only now: whoever reads this line may stop the daemon at once, and must get a clean stop.
  process.stdout.write(`listening on ${daemon.url}\n`);
}

/** The bearer token, required for anything but a loopback address. */
function readToken(config: Config): string | null {
  if (config.authTokenFile === null) {
    if (!isLoopbackHost(config.host)) {
      throw new ConfigError(
        `--host ${config.host} is reachable from other machines: set --auth-token-file too, or bind a loopback address such as 127.0.0.1`,
      );
    }
    return null;
  }
  let token: string;
  try {
    token = readRegularFile(config.authTokenFile, TOKEN_FILE).trim();
  } catch (error) {
    throw new ConfigError(`--auth-token-file ${JSON.stringify(config.authTokenFile)} ${(error as Error).message}`);
  }
  if (token.length === 0)
    throw new ConfigError(`--auth-token-file ${JSON.stringify(config.authTokenFile)} is empty; put the token in it`);
  return token;
}

await main();
