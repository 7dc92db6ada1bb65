// Short tasks through MCP (`run` of `echo hello` until done, 16 concurrent clients) against
// `xargs -P 16 -n1 bash -c 'echo hello'` on the same count, both measured in this run.
// Usage: node dist/bench/short-tasks.js [--tasks N] [--clients N] [--max-running N] [--containment MODE]
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { connectClients, rssMegabytes, runTasks, secondsSince, startBenchDaemon } from './lib.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1000' },
    clients: { type: 'string', default: '16' },
    'max-running': { type: 'string', default: '64' },
    containment: { type: 'string', default: 'auto' },
  },
});
const TASKS = Number(values.tasks);
const CLIENTS = Number(values.clients);

function measureXargs(): number {
  const start = process.hrtime.bigint();
  execFileSync('bash', ['-c', `seq ${TASKS} | xargs -P ${CLIENTS} -n1 bash -c 'echo hello' > /dev/null`]);
  return TASKS / secondsSince(start);
}

async function measureDaemon(): Promise<{ rate: number; rssMb: number; failures: number }> {
  const daemon = await startBenchDaemon(['--max-running', values['max-running']!, '--retention-count', String(TASKS * 2), '--containment', values.containment!]);
  try {
    const clients = await connectClients(daemon.url, CLIENTS);
    const { rate, failures } = await runTasks(clients, TASKS, 'echo hello', 'hello\n');
    const rssMb = rssMegabytes(daemon.pid);
    await Promise.all(clients.map((client) => client.close()));
    return { rate, rssMb, failures };
  } finally {
    await daemon.stop();
  }
}

const baseline = measureXargs();
const daemon = await measureDaemon();
console.log(JSON.stringify({
  benchmark: 'short-tasks',
  containment: values.containment,
  tasks: TASKS,
  clients: CLIENTS,
  xargs_tasks_per_s: Math.round(baseline),
  daemon_tasks_per_s: Math.round(daemon.rate),
  ratio: Number((daemon.rate / baseline).toFixed(2)),
  daemon_rss_mb_after: Number(daemon.rssMb.toFixed(1)),
  failures: daemon.failures,
}));
