// One daemon per state directory: a second one would mark the first one's tasks interrupted.
// `<stateDir>/daemon.pid` names the holder by pid and start time; the holder keeps it open for its
// whole life, and a file whose holder is gone (state-lock-holder.ts) is set aside and taken.
//
// Each start writes its record in a draft of its own (`daemon.pid.new-<pid>`, kept open until the
// start is decided) and links the draft into place: link never replaces a file, so no start can
// read a half-written daemon.pid. A stale file is moved aside and compared before it is dropped;
// if another start's file was put there since the stale one was read, it is linked back. A start
// whose link succeeded holds the lock only once every other start that was deciding meanwhile (its
// draft still there, its process alive) is done and daemon.pid still names its own file: a start
// that read the stale file before the link may yet move it aside, and once those are done every
// later start reads the new holder's file and leaves it. So any number of starts at once, one holder.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  linkSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
  type BigIntStats,
} from 'node:fs';
import { join } from 'node:path';
import { StateDirBusyError } from '../errors.js';
import { describeOwnProcess, holdsOpen, holdsStateDir, parseLockRecord } from './state-lock-holder.js';

const LOCK_FILE = 'daemon.pid';
const DRAFT_PREFIX = `${LOCK_FILE}.new-`;
/** Takes over a stale file at most this often; more means other starts keep taking and leaving it. */
const TAKE_ATTEMPTS = 10;
/** How long a start that linked its file waits for the other starts deciding at the same moment. */
const SETTLE_MS = 5000;
const SETTLE_POLL_MS = 1;

/** Takes `<stateDir>/daemon.pid`, or throws StateDirBusyError naming the daemon that holds it; returns its release. */
export function lockStateDir(stateDir: string): () => void {
  const path = join(stateDir, LOCK_FILE);
  const draft = join(stateDir, `${DRAFT_PREFIX}${process.pid}`);
  rmSync(draft, { force: true }); // a dead process's, by the pid in its name
  const fd = openSync(draft, 'wx', 0o600);
  const own = fstatSync(fd, { bigint: true });
  try {
    writeSync(fd, describeOwnProcess());
    takeLock(draft, own, stateDir);
  } catch (error) {
    if (sameFile(statOrNull(path), own)) rmSync(path, { force: true });
    closeSync(fd);
    throw error;
  } finally {
    rmSync(draft, { force: true });
  }
  return () => {
    if (sameFile(statOrNull(path), own)) rmSync(path, { force: true });
    closeSync(fd);
  };
}

function takeLock(draft: string, own: BigIntStats, stateDir: string): void {
  const path = join(stateDir, LOCK_FILE);
  for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
    if (!linkIfAbsent(draft, path)) {
      const found = readLockFile(path);
      if (found === null) continue; // removed meanwhile
      // Unless it is ours again (linked back by a start that had moved it aside):
      if (!sameFile(found.stats, own)) {
        const registry = statOrNull(join(stateDir, 'tasks.sqlite'));
        const record = parseLockRecord(found.text);
        if (record !== null && holdsStateDir(record, registry ? [found.stats, registry] : [found.stats]))
          throw busyError(record.pid, stateDir);
        setAsideStale(path, found.stats);
        continue;
      }
    }
    if (stillOursOnceDecided(own, stateDir)) return;
  }
  throw new StateDirBusyError(
    `the state directory ${stateDir} changed hands ${TAKE_ATTEMPTS} times while this daemon tried to take it (${path}); another hive-bash-daemon is starting there: stop it or choose another --state-dir`,
  );
}

function linkIfAbsent(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Waits until no other start is deciding while daemon.pid names `own`: true then, false once it does not (it was moved aside). */
function stillOursOnceDecided(own: BigIntStats, stateDir: string): boolean {
  const deadline = Date.now() + SETTLE_MS;
  const isOurs = () => sameFile(statOrNull(join(stateDir, LOCK_FILE)), own);
  for (;;) {
    if (!isOurs()) return false;
    const deciding = findDecidingStarts(stateDir);
    if (deciding.length === 0) return isOurs();
    if (Date.now() > deadline) throw busyError(deciding[0]!, stateDir);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, SETTLE_POLL_MS);
  }
}

/** The pids of the other live starts whose drafts are in `stateDir`. */
function findDecidingStarts(stateDir: string): number[] {
  return readdirSync(stateDir).flatMap((name) => {
    const pid = name.startsWith(DRAFT_PREFIX) ? Number(name.slice(DRAFT_PREFIX.length)) : NaN;
    if (!Number.isInteger(pid) || pid === process.pid) return [];
    const draft = statOrNull(join(stateDir, name));
    return draft !== null && holdsOpen(pid, [draft]) ? [pid] : [];
  });
}

/** Removes `stale` from `path`: moved aside, compared, and linked back if it turns out to be another start's new file. */
function setAsideStale(path: string, stale: BigIntStats): void {
  const aside = `${path}.stale-${process.pid}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if (!sameFile(lstatOrNull(aside), stale)) linkIfAbsent(aside, path);
  } finally {
    unlinkSync(aside);
  }
}

/**
 * The text and identity of one file at `path` (read through one descriptor), or null when there is
 * none. Anything but a regular file (a FIFO, whose plain open would wait for a writer; a symlink, a
 * device) is opened without waiting, never read, and reads as no record: a stale file.
 */
function readLockFile(path: string): { text: string; stats: BigIntStats } | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code !== 'ELOOP' && code !== 'ENXIO') throw error;
    const stats = lstatOrNull(path); // a symlink, or a socket
    return stats === null ? null : { text: '', stats };
  }
  try {
    const stats = fstatSync(fd, { bigint: true });
    return { text: stats.isFile() ? readFileSync(fd, 'latin1') : '', stats };
  } finally {
    closeSync(fd);
  }
}

function busyError(pid: number, stateDir: string): StateDirBusyError {
  return new StateDirBusyError(
    `another hive-bash-daemon (pid ${pid}) uses the state directory ${stateDir}; stop it or choose another --state-dir`,
  );
}

function statOrNull(path: string): BigIntStats | null {
  return statSync(path, { bigint: true, throwIfNoEntry: false }) ?? null;
}

function lstatOrNull(path: string): BigIntStats | null {
  return lstatSync(path, { bigint: true, throwIfNoEntry: false }) ?? null;
}

function sameFile(a: BigIntStats | null, b: BigIntStats): boolean {
  return a !== null && a.dev === b.dev && a.ino === b.ino;
}
