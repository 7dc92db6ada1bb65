// Serves the todo protocol on a unix socket: one answer line per request line, in order.
import { chmodSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { SocketBusyError } from '../errors.js';
import { readLines } from '../shared/line-reader.js';
import { parseRequest, type HarnessAnswer } from '../shared/todo-protocol.js';
import type { BoardChange, TodoBoard } from './todo-board.js';

export interface ServeOptions {
  onChange(change: BoardChange): void;
  /** A request that was refused, with the reason sent back. */
  onRefused(line: string, error: string): void;
}

/** Listens on `path` (replacing a stale socket file that nothing serves) and answers each request. */
export async function serveTodoSocket(path: string, board: TodoBoard, options: ServeOptions): Promise<Server> {
  const server = createServer((socket) => handleConnection(socket, board, options));
  try {
    await listen(server, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    if (await isServed(path))
      throw new SocketBusyError(`another process serves ${path}; stop it or choose another path`);
    unlinkSync(path);
    await listen(server, path);
  }
  chmodSync(path, 0o600);
  return server;
}

function handleConnection(socket: Socket, board: TodoBoard, options: ServeOptions): void {
  socket.on('error', () => {}); // a client that goes away mid-write is its own business
  readLines(socket, (line) => socket.write(`${JSON.stringify(answer(line, board, options))}\n`));
}

function answer(line: string, board: TodoBoard, options: ServeOptions): HarnessAnswer {
  try {
    options.onChange(board.apply(parseRequest(line)));
    return { ok: true };
  } catch (error) {
    const message = (error as Error).message;
    options.onRefused(line, message);
    return { ok: false, error: message };
  }
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function isServed(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
