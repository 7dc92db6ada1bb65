// Short-task throughput with 100, 10,000 and 100,000 finished tasks in the registry, in this run:
// flat means the last against the first is at least 0.9x.
// Usage: node dist/bench/registry-size.js [--sizes 100,10000,100000] [--tasks N]
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectClients, runTasks, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '100,10000,100000' }, tasks: { type: 'string', default: '300' } },
});
const SIZES = values.sizes.split(',').map(Number);
const KEEP = ['--retention-count', '10000000', '--retention-days', '3650'];

/** Adds `count` finished tasks straight into the registry of a stopped daemon. */
function fillRegistry(stateDir: string, count: number): void {
  const db = new Database(join(stateDir, 'tasks.sqlite'));
  const insert = db.prepare(`INSERT INTO tasks (id, cwd, state, run_key, exit_code, created_at, started_at, ended_at)
    VALUES (?, '/', 'done', ?, 0, ?, ?, ?)`);
  // Each task's command is a row of its own, under the task's seq (src/supervisor/registry/database.ts).
  const command = db.prepare(`INSERT INTO task_commands (seq, command) VALUES (?, 'echo filler')`);
  const now = Date.now();
  db.transaction(() => {
    for (let i = 0; i < count; i++) command.run(insert.run(`filler-${i}`, randomUUID(), now, now, now).lastInsertRowid);
  })();
  db.close();
}

const rows = [];
for (const size of SIZES) {
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bench-registry-'));
  try {
    await (await startBenchDaemon(KEEP, {}, stateDir)).stop(); // creates the registry's tables
    fillRegistry(stateDir, size);
    const daemon = await startBenchDaemon(KEEP, {}, stateDir);
    try {
      const clients = await connectClients(daemon.url, 16);
      const { rate, failures } = await runTasks(clients, Number(values.tasks), 'echo hello', 'hello\n');
      await Promise.all(clients.map((client) => client.close()));
      rows.push({ finished_tasks: size, tasks_per_s: Math.round(rate), failures });
    } finally {
      await daemon.stop();
    }
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
  }
}
const ratio = rows.at(-1)!.tasks_per_s / rows[0]!.tasks_per_s;
console.table(rows);
console.log(
  JSON.stringify({ benchmark: 'registry-size', goal: 'last/first >= 0.9', ratio: Number(ratio.toFixed(2)), rows }),
);
