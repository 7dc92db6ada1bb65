// One task writing 1 GiB to stdout through the daemon (pipe, worker, file) against
// `head -c 1G /dev/zero > file` on the same file system, in this run.
// Usage: node dist/bench/output-rate.js [--mib N]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectClients, secondsSince, startBenchDaemon } from './lib.js';

const { values } = parseArgs({ options: { mib: { type: 'string', default: '1024' } } });
const BYTES = Number(values.mib) * 1024 * 1024;

/** `head -c` into a file on the same file system; the first write into fresh page cache is slower, so the best of two counts. */
function measureHead(): number {
  const scratch = mkdtempSync(join(tmpdir(), 'hive-bench-output-'));
  try {
    const start = process.hrtime.bigint();
    execFileSync('bash', ['-c', `head -c ${BYTES} /dev/zero > ${join(scratch, 'out')}`]);
    return BYTES / secondsSince(start);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

const baseline = Math.max(measureHead(), measureHead());

const daemon = await startBenchDaemon(['--max-output-bytes', '0']);
let rate: number;
let bytes: number;
try {
  const [client] = await connectClients(daemon.url, 1);
  const start = process.hrtime.bigint();
  let result = await client!.callTool({ name: 'run', arguments: { command: `head -c ${BYTES} /dev/zero`, wait_seconds: 30 } });
  let task = result.structuredContent as { id: string; state: string; stdout_bytes: number };
  while (task.state === 'running') {
    result = await client!.callTool({ name: 'status', arguments: { id: task.id, wait_seconds: 30, tail_bytes: 0 } });
    task = result.structuredContent as typeof task;
  }
  rate = BYTES / secondsSince(start);
  bytes = task.stdout_bytes;
  await client!.close();
} finally {
  await daemon.stop();
}
if (bytes !== BYTES) throw new Error(`the file holds ${bytes} bytes, not ${BYTES}`);
const rows = [
  { writer: 'head -c > file', mib_per_s: Math.round(baseline / 2 ** 20) },
  { writer: 'task through the daemon', mib_per_s: Math.round(rate / 2 ** 20), ratio: Number((rate / baseline).toFixed(2)) },
];
console.table(rows);
console.log(JSON.stringify({ benchmark: 'output-rate', goal: 'ratio >= 0.9', mib: Number(values.mib), rows }));
