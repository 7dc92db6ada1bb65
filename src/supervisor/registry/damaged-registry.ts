// A registry damaged on disk does not stop the daemon: the file (with its -wal and -shm) is renamed
// beside it as tasks.sqlite.damaged-<time>, kept for a post-mortem, and a fresh registry takes its
// place. The tasks it held are forgotten; their output files stay where they are.
import Database from 'better-sqlite3';
import { existsSync, lstatSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { errorCode } from '../../errors.js';
import { openDatabase } from './database.js';

/** A damaged registry this start set aside: where it is now, and what was wrong with it. */
export interface SetAsideRegistry {
  path: string;
  reason: string;
}

/** The WAL, its index and the database: the WAL goes first, so that no fresh registry ever meets the old one's. */
const SET_ASIDE_ORDER = ['-wal', '-shm', ''];

/** How many of quick_check's findings a reason quotes. */
const FINDINGS_QUOTED = 3;

/** Opens `<stateDir>/tasks.sqlite`; a damaged one is set aside first, and a fresh one opened in its place. */
export function openRegistry(stateDir: string): { db: Database.Database; setAside: SetAsideRegistry | null } {
  const file = join(stateDir, 'tasks.sqlite');
  let reason = findDamage(file);
  if (reason === null) {
    try {
      return { db: openDatabase(file), setAside: null };
    } catch (error) {
      if (!isDamage(error)) throw error;
      reason = (error as Error).message;
    }
  }
  const path = setAsideDamaged(file, new Date());
  return { db: openDatabase(file), setAside: { path, reason } };
}

/**
 * What is wrong with the file (SQLite's error, or quick_check's first findings), or null when it is
 * sound or not there. Read through a read-only connection, which leaves the files as they are: a
 * writer's close would checkpoint the WAL into the damaged file and delete it.
 */
function findDamage(file: string): string | null {
  const foreign = findForeignFile(file);
  if (foreign !== null) return foreign;
  if (!existsSync(file)) return null;
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const findings = (db.pragma(`quick_check(${FINDINGS_QUOTED})`) as Array<{ quick_check: string }>).map(
      (row) => row.quick_check,
    );
    return findings.length === 1 && findings[0] === 'ok'
      ? null
      : `quick_check: ${findings.join('; ').replace(/\s+/g, ' ')}`;
  } catch (error) {
    return isDamage(error) ? (error as Error).message : null; // anything else is for the writer's open to report
  } finally {
    db?.close();
  }
}

/**
 * Which of the registry's files is not a regular file (a FIFO, whose open by SQLite would wait for
 * a writer forever; a symlink, a socket, a device, a directory), in words; null when none is.
 */
function findForeignFile(file: string): string | null {
  for (const suffix of SET_ASIDE_ORDER) {
    const stats = lstatSync(file + suffix, { throwIfNoEntry: false });
    if (stats !== undefined && !stats.isFile()) return `${file + suffix} is not a regular file`;
  }
  return null;
}

/** SQLite's codes for a file it cannot read as a database: damage, not a fault of the disk or a bug. */
function isDamage(error: unknown): boolean {
  return /^SQLITE_(CORRUPT|NOTADB)/.test(errorCode(error));
}

/** Renames `file` and its companions to `<file>.damaged-<ISO 8601 basic time>` (plus -wal, -shm); returns the new name of `file`. */
function setAsideDamaged(file: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, '');
  let aside = `${file}.damaged-${stamp}`;
  for (let n = 2; SET_ASIDE_ORDER.some((suffix) => existsSync(aside + suffix)); n++)
    aside = `${file}.damaged-${stamp}-${n}`;
  for (const suffix of SET_ASIDE_ORDER) {
    try {
      renameSync(file + suffix, aside + suffix);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  return aside;
}
