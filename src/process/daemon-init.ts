// A daemon started as PID 1 (a container's CMD or ENTRYPOINT) puts hive-daemon-init above itself
// (native/src/daemon-init.c): PID 1 must reap every orphan the kernel hands it, which Node cannot
// do beside libuv, and gets no signal it has no handler for. The init runs the daemon again with
// the same command line, as PID 2, forwards the stop signals to it and exits as it does.
import { DAEMON_INIT_PATH, nativeAddon } from './native.js';

/** Whether this process must put the init above itself: it is PID 1, and not already under it. */
export function needsDaemonInit(): boolean {
  return process.pid === 1 && process.platform === 'linux';
}

/** Replaces this process with the init, which runs this same command line as its child; returns why not when it cannot. */
export function execUnderDaemonInit(): string {
  const env = Object.entries(process.env).flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}`]));
  const command = [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
  try {
    const addon = nativeAddon();
    // In a file, not the init's argv: a task's `pkill -f node` must not find the daemon's command there.
    const commandFd = addon.textFd(command.map((word) => `${word}\0`).join(''));
    return addon.exec(DAEMON_INIT_PATH, ['hive-daemon-init', String(commandFd)], env, [commandFd]);
  } catch (error) {
    return (error as Error).message;
  }
}
