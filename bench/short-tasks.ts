// Short tasks through MCP (`run` of `echo hello` until done, 16 concurrent clients) against
// `xargs -P 16 -n1 bash -c 'echo hello'` on the same count, both measured in this run.
// Usage: node dist/bench/short-tasks.js [--tasks N] [--clients N] [--max-running N]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { launchDaemon } from '../test/helpers/daemon.js';

const { values } = parseArgs({ options: { tasks: { type: 'string', default: '1000' }, clients: { type: 'string', default: '16' }, 'max-running': { type: 'string', default: '64' } } });
const TASKS = Number(values.tasks);
const CLIENTS = Number(values.clients);

function measureXargs(): number {
  const started = process.hrtime.bigint();
  execFileSync('bash', ['-c', `seq ${TASKS} | xargs -P ${CLIENTS} -n1 bash -c 'echo hello' > /dev/null`]);
  return TASKS / (Number(process.hrtime.bigint() - started) / 1e9);
}

async function measureDaemon(): Promise<{ rate: number; rssMb: number; failures: number }> {
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-bench-'));
  const daemon = await launchDaemon(['--port', '0', '--state-dir', stateDir, '--log-level', 'warn', '--max-running', values['max-running']!, '--retention-count', String(TASKS * 2)], {}, () =>
    rmSync(stateDir, { recursive: true, force: true }),
  );
  try {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(daemon.url)));
      return client;
    }));
    let next = 0;
    let failures = 0;
    const started = process.hrtime.bigint();
    await Promise.all(clients.map(async (client) => {
      while (next < TASKS) {
        next++;
        const result = await client.callTool({ name: 'run', arguments: { command: 'echo hello', wait_seconds: 30 } });
        const task = result.structuredContent as { state: string; stdout_tail: string };
        if (result.isError || task.state !== "done" || task.stdout_tail !== "hello\n") {
          failures++;
          console.error(JSON.stringify(result).slice(0, 1500));
        }
      }
    }));
    const rate = TASKS / (Number(process.hrtime.bigint() - started) / 1e9);
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${daemon.child.pid}/status`, 'utf8'))?.[1]);
    await Promise.all(clients.map((client) => client.close()));
    return { rate, rssMb: rssKb / 1024, failures };
  } finally {
    daemon.child.kill('SIGTERM');
  }
}

const baseline = measureXargs();
const daemon = await measureDaemon();
const result = {
  tasks: TASKS,
  clients: CLIENTS,
  xargs_tasks_per_s: Math.round(baseline),
  daemon_tasks_per_s: Math.round(daemon.rate),
  ratio: Number((daemon.rate / baseline).toFixed(2)),
  daemon_rss_mb_after: Number(daemon.rssMb.toFixed(1)),
  failures: daemon.failures,
};
console.log(JSON.stringify(result));
