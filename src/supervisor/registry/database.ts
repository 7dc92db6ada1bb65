// The registry's one SQLite database (task rows, the todo outbox, counters): opened once, brought
// up to the current schema by numbered migrations recorded in SQLite's user_version.
import Database from 'better-sqlite3';
import { RegistryVersionError } from '../../errors.js';
import { FINISHED_STATES } from '../../shared/task-states.js';

/** The SQL list of finished states, for queries that use the partial index. */
export const FINISHED_SQL = `(${FINISHED_STATES.map((state) => `'${state}'`).join(', ')})`;

/**
 * Migration N brings user_version N-1 to N; each runs in one transaction with its version bump.
 * Registries from before the numbering report version 0 with some of version 1's tables already
 * there, so version 1 creates only what is missing.
 */
const MIGRATIONS: Array<(db: Database.Database) => void> = [
  (db) => {
    db.exec(`
      CREATE TABLE IF NOT EXISTS tasks (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        name TEXT,
        command TEXT NOT NULL,
        cwd TEXT NOT NULL,
        state TEXT NOT NULL,
        run_key TEXT NOT NULL,
        timeout_ms INTEGER,
        exit_code INTEGER,
        signal TEXT,
        error TEXT,
        created_at INTEGER NOT NULL,
        started_at INTEGER,
        ended_at INTEGER,
        pid INTEGER,
        pgid INTEGER,
        stdout_truncated INTEGER NOT NULL DEFAULT 0,
        stderr_truncated INTEGER NOT NULL DEFAULT 0
      );
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS todo_outbox (
        key TEXT PRIMARY KEY,
        version INTEGER NOT NULL UNIQUE,
        line TEXT NOT NULL,
        queued_at INTEGER NOT NULL
      );
    `);
    const columns = new Set(
      db
        .prepare<[], { name: string }>('PRAGMA table_info(tasks)')
        .all()
        .map((column) => column.name),
    );
    const added: Array<[string, string]> = [
      ['cpu_ms', 'INTEGER'],
      ['todo_shown', 'INTEGER NOT NULL DEFAULT 0'],
      ['pty', 'INTEGER NOT NULL DEFAULT 0'],
      ['interactive', 'INTEGER NOT NULL DEFAULT 0'],
    ];
    for (const [name, type] of added) if (!columns.has(name)) db.exec(`ALTER TABLE tasks ADD COLUMN ${name} ${type}`);
    db.exec(`
      CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks (state, seq);
      CREATE INDEX IF NOT EXISTS tasks_by_end ON tasks (ended_at) WHERE ended_at IS NOT NULL;
      CREATE INDEX IF NOT EXISTS finished_tasks_by_seq ON tasks (seq) WHERE state IN ${FINISHED_SQL};
    `);
  },
  // 2: per-task limits and what they did.
  (db) => {
    db.exec(`
      ALTER TABLE tasks ADD COLUMN memory_limit_mb INTEGER;
      ALTER TABLE tasks ADD COLUMN max_processes INTEGER;
      ALTER TABLE tasks ADD COLUMN cpu_limit REAL;
      ALTER TABLE tasks ADD COLUMN oom_killed INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE tasks ADD COLUMN pids_limit_hits INTEGER;
      ALTER TABLE tasks ADD COLUMN memory_peak_bytes INTEGER;
    `);
  },
  // 3: why a stream was truncated.
  (db) => {
    db.exec(`
      ALTER TABLE tasks ADD COLUMN stdout_truncated_reason TEXT;
      ALTER TABLE tasks ADD COLUMN stderr_truncated_reason TEXT;
    `);
  },
  // 4: the leader's pid in the tasks' own PID namespace, and the sandbox a task ran in (JSON).
  (db) => {
    db.exec(`
      ALTER TABLE tasks ADD COLUMN namespace_pid INTEGER;
      ALTER TABLE tasks ADD COLUMN sandbox TEXT;
    `);
  },
  // 5: a pty task's terminal size (output's screen is drawn at it).
  (db) => {
    db.exec(`
      ALTER TABLE tasks ADD COLUMN terminal_cols INTEGER;
      ALTER TABLE tasks ADD COLUMN terminal_rows INTEGER;
    `);
  },
  // 6: the execs the command policy refused (JSON: their count and the last few).
  (db) => {
    db.exec('ALTER TABLE tasks ADD COLUMN exec_denials TEXT');
  },
  // 7: commands in a table of their own. SQLite writes a whole row again on every update of it, and
  // a task's row is updated at each change of its state: a command of 256 KiB in it was 256 KiB
  // written each time (2,000 interrupted at a start: 528 MB of WAL in 2.6 s; now nothing).
  (db) => {
    db.exec(`
      CREATE TABLE task_commands (seq INTEGER PRIMARY KEY, command TEXT NOT NULL);
      INSERT INTO task_commands (seq, command) SELECT seq, command FROM tasks;
      ALTER TABLE tasks DROP COLUMN command;
      CREATE TRIGGER task_command_removed AFTER DELETE ON tasks BEGIN
        DELETE FROM task_commands WHERE seq = old.seq;
      END;
    `);
  },
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Opens the registry file (WAL) and migrates it; one connection, for the main thread only. Closed again if that fails. */
export function openDatabase(file: string): Database.Database {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL survives a crash of the daemon; only a power loss can take the last commits.
    db.pragma('synchronous = NORMAL');
    migrate(db, file);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

function migrate(db: Database.Database, file: string): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new RegistryVersionError(
      `the registry ${file} has schema version ${version}, newer than this daemon's ${SCHEMA_VERSION}; run the newer daemon or choose another --state-dir`,
    );
  }
  for (let next = version + 1; next <= SCHEMA_VERSION; next++) {
    db.transaction(() => {
      MIGRATIONS[next - 1]!(db);
      db.pragma(`user_version = ${next}`);
    })();
  }
}
