// What the benchmarks share: a daemon on a temp state dir, MCP clients, a timer and the RSS reader.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { launchDaemon } from '../test/helpers/daemon.js';

export interface BenchDaemon {
  url: string;
  stateDir: string;
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the real daemon with `args` on a fresh state directory (removed at its exit), or on `stateDir` (kept). */
export async function startBenchDaemon(args: string[], env: Record<string, string> = {}, stateDir?: string): Promise<BenchDaemon> {
  const dir = stateDir ?? mkdtempSync(join(tmpdir(), 'hive-bash-bench-'));
  const daemon = await launchDaemon(['--port', '0', '--state-dir', dir, '--log-level', 'warn', ...args], env, () => {
    if (stateDir === undefined) rmSync(dir, { recursive: true, force: true });
  });
  return {
    url: daemon.url,
    stateDir: dir,
    origin: new URL(daemon.url).origin,
    pid: daemon.child.pid!,
    async stop() {
      const exited = new Promise((resolve) => daemon.child.once('exit', resolve));
      daemon.child.kill('SIGTERM');
      await exited;
    },
  };
}

export async function connectClients(url: string, count: number): Promise<Client[]> {
  return Promise.all(Array.from({ length: count }, async () => {
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    return client;
  }));
}

/** Seconds since `start` (from process.hrtime.bigint()). */
export const secondsSince = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;

export function rssMegabytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

/** Runs `total` tasks of `command` through `run` (waiting for each) from all clients; returns tasks/s and failures. */
export async function runTasks(clients: Client[], total: number, command: string, expectStdout: string): Promise<{ rate: number; failures: number }> {
  let next = 0;
  let failures = 0;
  const start = process.hrtime.bigint();
  await Promise.all(clients.map(async (client) => {
    while (next < total) {
      next++;
      const result = await client.callTool({ name: 'run', arguments: { command, wait_seconds: 30 } });
      const task = result.structuredContent as { state: string; stdout_tail: string } | undefined;
      if (result.isError || task?.state !== 'done' || task.stdout_tail !== expectStdout) failures++;
    }
  }));
  return { rate: total / secondsSince(start), failures };
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

/** The value at `fraction` (0.99 for p99) of `values`. */
export const percentile = (values: number[], fraction: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
};

/** A raw JSON-RPC session on the daemon's /mcp, for load that the SDK client would itself slow down. */
export async function openRawSession(pool: Pool, path = '/mcp'): Promise<(name: string, args: Record<string, unknown>) => Promise<{ status: number; text: string }>> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  const init = await pool.request({ path, method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } }) });
  await init.body.text();
  const session = { ...headers, 'mcp-session-id': String(init.headers['mcp-session-id']) };
  let id = 1;
  return async (name, args) => {
    const res = await pool.request({ path, method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'tools/call', params: { name, arguments: args } }) });
    return { status: res.statusCode, text: await res.body.text() };
  };
}

/**
 * The baseline of the request-rate benchmarks: a bare node:http server answering every POST with
 * `payload`, loaded by `load` through a pool of `connections` as the daemon was; returns calls/s.
 */
export async function measureBareServer(
  payload: string,
  connections: number,
  load: (call: () => Promise<{ status: number; text: string }>) => Promise<number>,
): Promise<number> {
  const bare = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(payload));
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const pool = new Pool(`http://127.0.0.1:${(bare.address() as AddressInfo).port}`, { connections });
  try {
    return await load(async () => {
      const res = await pool.request({ path: '/mcp', method: 'POST', body: '{"jsonrpc":"2.0","id":2,"method":"tools/call"}' });
      return { status: res.statusCode, text: await res.body.text() };
    });
  } finally {
    await pool.close();
    bare.close();
  }
}
