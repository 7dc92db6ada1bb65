// `status` calls per second through the daemon's MCP endpoint against a bare node:http JSON-RPC
// server answering the same payload, both loaded the same way (16 connections) in this run.
// Usage: node dist/bench/status-rate.js [--calls N]
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { measureBareServer, openRawSession, secondsSince, startBenchDaemon } from './lib.js';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '4000' }, connections: { type: 'string', default: '16' } } });
const CALLS = Number(values.calls);
const CONNECTIONS = Number(values.connections);

async function load(call: () => Promise<{ status: number; text: string }>): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONNECTIONS }, async () => {
    while (next++ < CALLS) {
      const { status, text } = await call();
      if (status !== 200 || !text.includes('"state"')) throw new Error(`bad answer ${status}: ${text.slice(0, 200)}`);
    }
  }));
  return CALLS / secondsSince(start);
}

const daemon = await startBenchDaemon([]);
const daemonPool = new Pool(daemon.origin, { connections: CONNECTIONS });
let payload = '';
let daemonRate: number;
try {
  const call = await openRawSession(daemonPool);
  const run = JSON.parse((await call('run', { command: 'echo hello' })).text);
  const id = run.result.structuredContent.id as string;
  payload = (await call('status', { id })).text;
  daemonRate = await load(() => call('status', { id }));
} finally {
  await daemonPool.close();
  await daemon.stop();
}

const bareRate = await measureBareServer(payload, CONNECTIONS, load);

const rows = [
  { server: 'bare node:http, same payload', calls_per_s: Math.round(bareRate) },
  { server: 'daemon status through MCP', calls_per_s: Math.round(daemonRate), ratio: Number((daemonRate / bareRate).toFixed(2)) },
];
console.table(rows);
console.log(JSON.stringify({ benchmark: 'status-rate', goal: 'ratio >= 0.5', calls: CALLS, connections: CONNECTIONS, rows }));
