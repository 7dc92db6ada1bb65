// `list` of 1,000 tasks (20 of them running, whose figures are read live) through the daemon's MCP
// endpoint, against a bare node:http server answering the same payload, both loaded the same way.
// Usage: node dist/bench/list-size.js [--tasks N] [--running N] [--calls N]
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { connectClients, measureBareServer, openRawSession, loadCalls, runTasks, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1000' },
    running: { type: 'string', default: '20' },
    calls: { type: 'string', default: '200' },
  },
});
const TASKS = Number(values.tasks);
const RUNNING = Number(values.running);
const CALLS = Number(values.calls);
const CONNECTIONS = 4;

const load = (call: () => Promise<{ status: number; text: string }>) => loadCalls(CALLS, CONNECTIONS, '"tasks"', call);

const daemon = await startBenchDaemon(['--retention-count', String(TASKS * 2)]);
const pool = new Pool(daemon.origin, { connections: CONNECTIONS });
let payload = '';
let daemonRate: number;
try {
  const clients = await connectClients(daemon.url, 8);
  await runTasks(clients, TASKS - RUNNING, 'echo hello', 'hello\n');
  const call = await openRawSession(pool);
  for (let i = 0; i < RUNNING; i++) await call('run', { command: 'sleep 300', wait_seconds: 0 });
  // A task just run may not have started yet (no process, so no figures): list until all have.
  type Listed = { state: string; memory_bytes?: number };
  let listed: Listed[];
  const deadline = Date.now() + 60_000;
  for (;;) {
    payload = (await call('list', { limit: TASKS })).text;
    listed = JSON.parse(payload).result.structuredContent.tasks as Listed[];
    if (Date.now() > deadline || listed.every((task) => task.state !== 'running' || task.memory_bytes !== undefined))
      break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const live = listed.filter((task) => task.state === 'running');
  if (listed.length !== TASKS || live.length !== RUNNING || live.some((task) => task.memory_bytes === undefined)) {
    throw new Error(
      `list gave ${listed.length} tasks, ${live.length} running with figures; expected ${TASKS} and ${RUNNING}`,
    );
  }
  daemonRate = await load(() => call('list', { limit: TASKS }));
  await Promise.all(clients.map((client) => client.close()));
} finally {
  await pool.close();
  await daemon.stop();
}

const bareRate = await measureBareServer(payload, CONNECTIONS, load);

const rows = [
  { server: 'bare node:http, same payload', calls_per_s: Math.round(bareRate) },
  {
    server: `daemon list of ${TASKS} (${RUNNING} running)`,
    calls_per_s: Math.round(daemonRate),
    ms_per_call: Number((1000 / daemonRate).toFixed(1)),
    ratio: Number((daemonRate / bareRate).toFixed(2)),
  },
];
console.table(rows);
console.log(
  JSON.stringify({
    benchmark: 'list-size',
    tasks: TASKS,
    running: RUNNING,
    calls: CALLS,
    payload_bytes: payload.length,
    rows,
  }),
);
