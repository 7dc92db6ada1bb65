// `status` calls per second through the daemon's MCP endpoint, in each era (a 2025 session, and
// 2026-07-28's per-request _meta), against a bare node:http JSON-RPC server answering the same
// payload, all loaded the same way (16 connections), alternated over rounds in this run (the order
// rotated each round), after a warm-up of each. Each ratio is the median of the rounds' own ratios.
// Usage: node dist/bench/status-rate.js [--calls N] [--rounds N] [--connections N]
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import {
  alternateRounds,
  loadCalls,
  measureBareServer,
  statelessCaller,
  openRawSession,
  roundRatios,
  spreadOf,
  startBenchDaemon,
} from './lib.js';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);

const loadOf = (calls: number) => (call: () => Promise<{ status: number; text: string }>) =>
  loadCalls(calls, CONNECTIONS, '"state"', call);

const daemon = await startBenchDaemon([]);
const daemonPool = new Pool(daemon.origin, { connections: CONNECTIONS });
let rates: Record<string, number[]>;
try {
  const call = await openRawSession(daemonPool);
  const run = JSON.parse((await call('run', { command: 'echo hello' })).text);
  const id = run.result.structuredContent.id as string;
  const payload = (await call('status', { id })).text;
  const stateless = statelessCaller(daemonPool);
  const sides = {
    bare: (calls: number) => measureBareServer(payload, CONNECTIONS, loadOf(calls)),
    daemon: (calls: number) => loadOf(calls)(() => call('status', { id })),
    stateless: (calls: number) => loadOf(calls)(() => stateless('status', { id })),
  };
  // Warm-up, not counted: the load generator's code and the daemon's hot path get compiled.
  for (const side of Object.values(sides)) await side(CALLS / 10);
  rates = await alternateRounds(ROUNDS, {
    bare: () => sides.bare(CALLS),
    daemon: () => sides.daemon(CALLS),
    stateless: () => sides.stateless(CALLS),
  });
} finally {
  await daemonPool.close();
  await daemon.stop();
}

const bare = spreadOf(rates.bare!);
const row = (server: string, side: 'daemon' | 'stateless') => {
  const measured = spreadOf(rates[side]!);
  const ratio = roundRatios(rates[side]!, rates.bare!);
  return {
    server,
    calls_per_s: measured.median,
    min: measured.min,
    max: measured.max,
    ratio: ratio.median,
    round_ratio_min: ratio.min,
    round_ratio_max: ratio.max,
  };
};
const session = row('daemon status through MCP, a 2025-11-25 session', 'daemon');
const stateless = row('daemon status through MCP 2026-07-28, no session', 'stateless');
const rows = [
  { server: 'bare node:http, same payload', calls_per_s: bare.median, min: bare.min, max: bare.max },
  session,
  stateless,
];
console.table(rows);
console.log(
  JSON.stringify({
    benchmark: 'status-rate',
    goal: 'ratio >= 0.5',
    calls: CALLS,
    rounds: ROUNDS,
    connections: CONNECTIONS,
    ratio: session.ratio,
    round_ratio_min: session.round_ratio_min,
    round_ratio_max: session.round_ratio_max,
    ratio_stateless: stateless.ratio,
    rows,
  }),
);
