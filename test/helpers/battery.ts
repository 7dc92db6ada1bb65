// What the reliability battery shares: its sizes (reduced in CI, full behind HIVE_BATTERY_FULL=1),
// batched tool calls over raw JSON-RPC (thousands of runs in few requests), and the daemon's own
// figures from /proc (RSS, open files, zombies among its and its spawners' children).
import { readdirSync, readFileSync } from 'node:fs';
import { get, type IncomingMessage } from 'node:http';
import { basename } from 'node:path';
import { SPAWNER_PATH } from '../../src/process/native.js';
import { readProcessEntry } from '../../src/process/process-table.js';
import { askWhole, INITIALIZE, MCP_HEADERS } from './raw-mcp.js';

export const FULL = process.env.HIVE_BATTERY_FULL === '1';

/** `ci` in the ordinary suite, `full` with HIVE_BATTERY_FULL=1. */
export const batterySize = (ci: number, full: number): number => (FULL ? full : ci);

/** The spawner's command name as /proc shows it (cut to 15 characters). */
const SPAWNER_NAME = basename(SPAWNER_PATH).slice(0, 15);

export interface ToolAnswer {
  isError: boolean;
  text: string;
  structured: any;
}

/** One MCP session spoken in raw JSON-RPC, so that a hundred tool calls go in one POST. */
export class RawSession {
  private nextId = 1;
  private constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
  ) {}

  static async open(url: string, headers: Record<string, string> = {}): Promise<RawSession> {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(INITIALIZE),
    });
    await res.text();
    const id = res.headers.get('mcp-session-id');
    if (res.status !== 200 || id === null) throw new Error(`initialize answered ${res.status} without a session`);
    return new RawSession(url, {
      ...MCP_HEADERS,
      ...headers,
      'mcp-session-id': id,
      'mcp-protocol-version': '2025-06-18',
    });
  }

  /** Calls `name` once per element of `calls`, in one batch; answers in the same order. */
  async batch(name: string, calls: Array<Record<string, unknown>>): Promise<ToolAnswer[]> {
    if (calls.length === 0) return [];
    const first = this.nextId;
    this.nextId += calls.length;
    const body = calls.map((args, i) => ({
      jsonrpc: '2.0',
      id: first + i,
      method: 'tools/call',
      params: { name, arguments: askWhole(name, args) },
    }));
    const res = await fetch(this.url, { method: 'POST', headers: this.headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (res.status !== 200)
      throw new Error(`a batch of ${calls.length} ${name} calls answered ${res.status}: ${text.slice(0, 500)}`);
    const answers = new Map((JSON.parse(text) as any[]).map((answer) => [answer.id as number, answer]));
    return calls.map((_, i) => {
      const answer = answers.get(first + i);
      if (!answer?.result) throw new Error(`${name} call ${i} of the batch: ${JSON.stringify(answer ?? 'no answer')}`);
      const content = (answer.result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
      return { isError: answer.result.isError === true, text: content, structured: answer.result.structuredContent };
    });
  }

  /** As `batch`, in batches of `size` one after another; every call must succeed. */
  async all(name: string, calls: Array<Record<string, unknown>>, size = 100): Promise<any[]> {
    const results: any[] = [];
    for (let i = 0; i < calls.length; i += size) {
      for (const [j, answer] of (await this.batch(name, calls.slice(i, i + size))).entries()) {
        if (answer.isError) throw new Error(`${name} call ${i + j} failed: ${answer.text}`);
        results.push(answer.structured);
      }
    }
    return results;
  }
}

export async function healthz(origin: string): Promise<any> {
  return (await fetch(`${origin}/healthz`)).json();
}

/** GET `path` on a connection of its own, as a client that connects afresh does. */
export function getAfresh(origin: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(`${origin}${path}`, { agent: false }, (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8').on('data', (text: string) => (body += text));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    }).on('error', reject);
  });
}

export interface ProcessFigures {
  rssKb: number;
  fds: number;
  threads: number;
}

/** The RSS, open file count and threads of `pid`, from /proc/<pid>/status and /proc/<pid>/fd. */
export function processFigures(pid: number): ProcessFigures {
  const status = readFileSync(`/proc/${pid}/status`, 'latin1');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1]);
  return { rssKb: field('VmRSS'), fds: readdirSync(`/proc/${pid}/fd`).length, threads: field('Threads') };
}

/** The daemon's hive-task-spawner processes (one per worker thread). */
export function spawnersOf(daemonPid: number): number[] {
  return allPids().filter((pid) => {
    const entry = readProcessEntry(pid);
    return entry !== null && entry.ppid === daemonPid && entry.name === SPAWNER_NAME;
  });
}

/** Zombies whose parent is the daemon or one of its spawners, as "pid (name) parent ppid". */
export function zombiesUnder(daemonPid: number): string[] {
  const parents = new Set([daemonPid, ...spawnersOf(daemonPid)]);
  const zombies: string[] = [];
  for (const pid of allPids()) {
    const entry = readProcessEntry(pid);
    if (entry && entry.state === 'Z' && parents.has(entry.ppid))
      zombies.push(`${pid} (${entry.name}) parent ${entry.ppid}`);
  }
  return zombies;
}

function allPids(): number[] {
  return readdirSync('/proc')
    .map(Number)
    .filter((pid) => Number.isInteger(pid));
}

/** A test's own measurements, printed as one line of JSON per figure for RELIABILITY.md. */
export function report(t: { diagnostic(message: string): void }, figures: Record<string, unknown>): void {
  t.diagnostic(`battery ${JSON.stringify({ full: FULL, ...figures })}`);
}
