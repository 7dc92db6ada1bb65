// A real unix socket peer playing the harness, scripted by the test: it records every request
// line, answers through a function the test can swap (ok, ok:false, slow, malformed, never), keeps
// the todos it acknowledged, and can go down and come back on the same path.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { readLines } from '../../src/shared/line-reader.js';
import { startTestDaemon, type DaemonOptions, type TestDaemon } from './daemon.js';
import { connectClient, type ToolClient } from './mcp-client.js';
import { waitFor } from './processes.js';

export interface PeerRequest {
  cmd: string;
  key: string;
  state?: string;
  summary?: string;
  body?: string;
  updated_at?: number;
  [field: string]: unknown;
}

export interface Received {
  line: string;
  request: PeerRequest;
  receivedAt: number;
}

/** Returns the answer line (without its newline) for one request. */
export type Answerer = (request: PeerRequest, line: string) => string | Promise<string>;

export const OK = '{"ok":true}';
export const answerOk: Answerer = () => OK;

export interface HarnessPeer {
  path: string;
  /** Every request line received, in order, across restarts. */
  received: Received[];
  /** The open todos by key, as the peer's acknowledged requests left them. */
  todos: Map<string, PeerRequest>;
  answer: Answerer;
  start(): Promise<void>;
  /** Closes the server and every connection (unanswered requests stay unanswered). */
  stop(): Promise<void>;
  /** Requests received for `key`, in order. */
  requestsFor(key: string): PeerRequest[];
  /** Waits until the open todo of `key` satisfies `check` (default: exists); returns it. */
  waitForTodo(key: string, check?: (todo: PeerRequest) => boolean, timeoutMs?: number): Promise<PeerRequest>;
}

/** A peer listening on a socket in a fresh temporary folder, removed (with the peer stopped) at teardown. */
export async function startHarnessPeer(
  t: TestContext,
  answer: Answerer = answerOk,
  start = true,
): Promise<HarnessPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'hive-peer-'));
  const peer = new Peer(join(dir, 'agent.sock'), answer);
  t.after(async () => {
    await peer.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  if (start) await peer.start();
  return peer;
}

class Peer implements HarnessPeer {
  received: Received[] = [];
  todos = new Map<string, PeerRequest>();
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(
    readonly path: string,
    public answer: Answerer,
  ) {}

  async start(): Promise<void> {
    const server = createServer((socket) => this.serve(socket));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.path, () => resolve());
    });
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  requestsFor(key: string): PeerRequest[] {
    return this.received.filter((entry) => entry.request.key === key).map((entry) => entry.request);
  }

  async waitForTodo(
    key: string,
    check: (todo: PeerRequest) => boolean = () => true,
    timeoutMs = 15_000,
  ): Promise<PeerRequest> {
    const found = await waitFor(() => {
      const todo = this.todos.get(key);
      return todo !== undefined && check(todo) ? todo : undefined;
    }, timeoutMs);
    if (!found)
      throw new Error(
        `no todo for ${key} as expected within ${timeoutMs} ms; requests for it: ${JSON.stringify(this.requestsFor(key), null, 1)}`,
      );
    return found;
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    // Answers go out in request order even when the answerer takes its time.
    let chain = Promise.resolve();
    readLines(socket, (line) => {
      const request = JSON.parse(line) as PeerRequest;
      this.received.push({ line, request, receivedAt: Date.now() });
      chain = chain.then(async () => {
        const answer = await this.answer(request, line);
        if (socket.destroyed) return;
        socket.write(`${answer}\n`);
        if (answer === OK) this.apply(request);
      });
    });
  }

  private apply(request: PeerRequest): void {
    if (request.cmd === 'todo_upsert') this.todos.set(request.key, request);
    if (request.cmd === 'todo_clear') this.todos.delete(request.key);
  }
}

/** A peer, a daemon connected to it (with the daemon `options` too) and an MCP client: how most todo tests begin. */
export async function startDaemonWithPeer(
  t: TestContext,
  options: DaemonOptions & { answer?: Answerer; peerDown?: boolean } = {},
): Promise<{ peer: HarnessPeer; daemon: TestDaemon; tools: ToolClient }> {
  const { answer, peerDown, ...daemonOptions } = options;
  const peer = await startHarnessPeer(t, answer, !peerDown);
  const daemon = await startTestDaemon(t, {
    ...daemonOptions,
    args: ['--agent-socket', peer.path, ...(daemonOptions.args ?? [])],
  });
  return { peer, daemon, tools: await connectClient(t, daemon.url) };
}

/** Runs a task that outlives run's wait and waits for its end todo: every operation queued before it has been delivered by then. */
export async function deliverSentinel(tools: ToolClient, peer: HarnessPeer, name: string): Promise<void> {
  await tools.ok('run', { command: 'true', name, wait_seconds: 0 });
  await peer.waitForTodo(name, (todo) => todo.state === 'done');
}

/** A promise with its resolve, for holding answers until the test lets them go. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
