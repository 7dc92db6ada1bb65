// What the benchmarks share: a daemon on a temp state dir, MCP clients, a timer and the RSS reader.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createServer } from 'node:http';
import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { launchDaemon } from '../test/helpers/daemon.js';
import { INITIALIZE, MCP_HEADERS } from '../test/helpers/raw-mcp.js';

export interface BenchDaemon {
  url: string;
  stateDir: string;
  origin: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts the real daemon with `args` on a fresh state directory (removed at its exit), or on `stateDir` (kept). */
export async function startBenchDaemon(
  args: string[],
  env: Record<string, string> = {},
  stateDir?: string,
): Promise<BenchDaemon> {
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
  return Promise.all(
    Array.from({ length: count }, async () => {
      const client = new Client({ name: 'bench', version: '1' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return client;
    }),
  );
}

/** Seconds since `start` (from process.hrtime.bigint()). */
export const secondsSince = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;

export function rssMegabytes(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

/** Runs `total` tasks of `command` through `run` (waiting for each) from all clients; returns tasks/s and failures. */
export async function runTasks(
  clients: Client[],
  total: number,
  command: string,
  expectStdout: string,
  extra: Record<string, unknown> = {},
): Promise<{ rate: number; failures: number }> {
  let next = 0;
  let failures = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    clients.map(async (client) => {
      while (next < total) {
        next++;
        const result = await client.callTool({ name: 'run', arguments: { command, wait_seconds: 30, ...extra } });
        const task = result.structuredContent as { state: string; stdout_tail: string } | undefined;
        if (result.isError || task?.state !== 'done' || task.stdout_tail !== expectStdout) failures++;
      }
    }),
  );
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
export async function openRawSession(
  pool: Pool,
  path = '/mcp',
): Promise<
  (name: string, args: Record<string, unknown>, method?: string) => Promise<{ status: number; text: string }>
> {
  const headers = { ...MCP_HEADERS, 'mcp-protocol-version': '2025-06-18' };
  const init = await pool.request({ path, method: 'POST', headers, body: JSON.stringify(INITIALIZE) });
  await init.body.text();
  const session = { ...headers, 'mcp-session-id': String(init.headers['mcp-session-id']) };
  let id = 1;
  // `method` other than tools/call (ping, say) is sent without params.
  return async (name, args, method = 'tools/call') => {
    const params = method === 'tools/call' ? { params: { name, arguments: args } } : {};
    const res = await pool.request({
      path,
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, ...params }),
    });
    return { status: res.statusCode, text: await res.body.text() };
  };
}

/**
 * `total` runs of `command` through `call` (a raw caller: statelessCaller's, say) from `concurrency`
 * callers at once, each until done; a run whose answer is not done with `expectStdout` is a failure.
 * `onDone` is told the count of answers so far after each.
 * The lean load generator: no SDK client, so the caller's own CPU stays small beside the daemon's.
 */
export async function runRawTasks(
  call: (name: string, args: Record<string, unknown>) => Promise<{ status: number; text: string }>,
  concurrency: number,
  total: number,
  command: string,
  expectStdout: string,
  extra: Record<string, unknown> = {},
  onDone: (done: number) => void = () => {},
): Promise<{ failures: number }> {
  let next = 0;
  let done = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        const { status, text } = await call('run', { command, wait_seconds: 30, ...extra });
        const task =
          status === 200
            ? (JSON.parse(text).result?.structuredContent as { state?: string; stdout_tail?: string } | undefined)
            : undefined;
        if (task?.state !== 'done' || task.stdout_tail !== expectStdout) failures++;
        onDone(++done);
      }
    }),
  );
  return { failures };
}

/** One tools/call of MCP 2026-07-28 as the raw callers send it: its headers and body, no session. */
function statelessToolCall(
  name: string,
  args: Record<string, unknown>,
  id: number,
): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  };
}

/** A raw caller of MCP 2026-07-28 on the daemon's /mcp: each call one POST with its _meta and headers, no session. */
export function statelessCaller(
  pool: Pool,
  path = '/mcp',
): (name: string, args: Record<string, unknown>) => Promise<{ status: number; text: string }> {
  let id = 1;
  return async (name, args) => {
    const res = await pool.request({ path, method: 'POST', ...statelessToolCall(name, args, ++id) });
    return { status: res.statusCode, text: await res.body.text() };
  };
}

/** A call whose request has been written: when, to the nanosecond, and its answer to come. */
export interface SentCall {
  writtenAt: bigint;
  answer: Promise<{ status: number; text: string }>;
}

/**
 * A caller of MCP 2026-07-28 for a call that is timed from its request leaving: each request is
 * formed in full, then written on one kept connection in a single write, its time taken just
 * before. A client's own work falls outside the figure, as it does for a floor that makes the
 * system call itself (kill-storm: undici took 0.9 to 2.9 ms from the call to its write). One call
 * at a time; answers must carry a content-length, as the daemon's do.
 */
export async function openWriteTimedCaller(
  origin: string,
): Promise<{ send(name: string, args: Record<string, unknown>): SentCall; close(): void }> {
  const { hostname, port } = new URL(origin);
  const socket = connect({ host: hostname, port: Number(port), noDelay: true });
  await once(socket, 'connect');
  let pending: { resolve(answer: { status: number; text: string }): void; reject(error: Error): void } | null = null;
  let received = Buffer.alloc(0);
  const fail = (error: Error) => pending?.reject(error);
  socket.on('error', fail);
  socket.on('close', () => fail(new Error('the daemon closed the connection')));
  socket.on('data', (chunk: Buffer) => {
    received = Buffer.concat([received, chunk]);
    const headEnd = received.indexOf('\r\n\r\n');
    if (headEnd < 0 || pending === null) return;
    const head = received.subarray(0, headEnd).toString('latin1');
    const length = Number(/^content-length: *(\d+)$/im.exec(head)?.[1] ?? NaN);
    if (!Number.isInteger(length)) return fail(new Error(`an answer without a content-length: ${head}`));
    if (received.length < headEnd + 4 + length) return;
    const text = received.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
    received = received.subarray(headEnd + 4 + length);
    const answered = pending;
    pending = null;
    answered.resolve({ status: Number(head.split(' ')[1]), text });
  });
  let id = 0;
  return {
    send(name, args) {
      if (pending !== null) throw new Error('one call at a time');
      const { headers, body } = statelessToolCall(name, args, ++id);
      const head = Object.entries({
        host: `${hostname}:${port}`,
        ...headers,
        'content-length': Buffer.byteLength(body),
      })
        .map(([field, value]) => `${field}: ${value}\r\n`)
        .join('');
      const request = Buffer.from(`POST /mcp HTTP/1.1\r\n${head}\r\n${body}`);
      const answer = new Promise<{ status: number; text: string }>(
        (resolve, reject) => (pending = { resolve, reject }),
      );
      const writtenAt = process.hrtime.bigint();
      socket.write(request);
      return { writtenAt, answer };
    },
    close: () => socket.destroy(),
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
      const res = await pool.request({
        path: '/mcp',
        method: 'POST',
        body: '{"jsonrpc":"2.0","id":2,"method":"tools/call"}',
      });
      return { status: res.statusCode, text: await res.body.text() };
    });
  } finally {
    await pool.close();
    bare.close();
  }
}

/**
 * Runs each of `sides` once a round for `rounds` rounds, the order rotated every round so that no
 * side always goes first (a baseline and the measured side see the same moments of a shared
 * machine); returns each side's results in round order.
 */
export async function alternateRounds<T>(
  rounds: number,
  sides: Record<string, () => Promise<T> | T>,
): Promise<Record<string, T[]>> {
  const names = Object.keys(sides);
  const results: Record<string, T[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < names.length; turn++) {
      const name = names[(round + turn) % names.length]!;
      results[name]!.push(await sides[name]!());
    }
  }
  return results;
}

/** The median and the range of `values`, rounded to `digits`. */
export function spreadOf(values: number[], digits = 0): { median: number; min: number; max: number } {
  const round = (value: number) => Number(value.toFixed(digits));
  return { median: round(median(values)), min: round(Math.min(...values)), max: round(Math.max(...values)) };
}

/**
 * The ratio of `measured` to `baseline` where both were taken in the same rounds: each round's own
 * ratio (the two sides saw the same moments of the machine), their median and range.
 */
export const roundRatios = (measured: number[], baseline: number[]) =>
  spreadOf(
    measured.map((value, round) => value / baseline[round]!),
    2,
  );

/** Makes `calls` calls over `connections` concurrent loops, each answer checked for `expect`; returns calls/s. */
export async function loadCalls(
  calls: number,
  connections: number,
  expect: string,
  call: () => Promise<{ status: number; text: string }>,
): Promise<number> {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next++ < calls) {
        const { status, text } = await call();
        if (status !== 200 || !text.includes(expect)) throw new Error(`bad answer ${status}: ${text.slice(0, 200)}`);
      }
    }),
  );
  return calls / secondsSince(start);
}
