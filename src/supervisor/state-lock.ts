// One daemon per state directory: a second one would mark the first one's tasks interrupted.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StateDirBusyError } from '../errors.js';

/** Takes `<stateDir>/daemon.pid`, replacing one left by a daemon that is gone; returns its release. */
export function lockStateDir(stateDir: string): () => void {
  const path = join(stateDir, 'daemon.pid');
  const holder = readHolder(path);
  if (holder !== null && holder !== process.pid && processIsDaemon(holder)) {
    throw new StateDirBusyError(`another hive-bash-daemon (pid ${holder}) uses the state directory ${stateDir}; stop it or choose another --state-dir`);
  }
  writeFileSync(path, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    if (readHolder(path) === process.pid) rmSync(path, { force: true });
  };
}

function readHolder(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** A live node process: a pid reused by anything else does not hold the lock. */
function processIsDaemon(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('node');
  } catch {
    return false;
  }
}
