#!/usr/bin/env node
// hive-agent-socket: the reference harness side of the todo socket. Serves the protocol on a
// unix socket, answers ok, keeps the open todos and prints every change as a JSON line on stdout.
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { resolve } from 'node:path';
import { SocketBusyError } from '../errors.js';
import { serveTodoSocket } from './socket-server.js';
import { TodoBoard } from './todo-board.js';

const EXIT_USAGE = 2;

const HELP = [
  'Usage: hive-agent-socket [--socket PATH | PATH]',
  '',
  'Serves the todo socket a harness offers hive-bash-daemon (HIVE_AGENT_SOCKET): one JSON request a line,',
  'one answer line each ({"ok":true}, or {"ok":false,"error":"..."} for a request it cannot read).',
  'Every accepted change is printed on stdout as one JSON line; the first line says where it listens.',
  '',
  '  --socket PATH   the socket to serve (default: $HIVE_AGENT_SOCKET)',
  '  -h, --help      this text',
].join('\n');

function readSocketPath(): { path: string } | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      options: { socket: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    fail(`${(error as Error).message.split('\n')[0]} (see --help)`);
  }
  if (parsed.values.help) return 'help';
  if (parsed.positionals.length > 1)
    fail(`expected one socket path; got ${parsed.positionals.length}: ${JSON.stringify(parsed.positionals)}`);
  const path = parsed.values.socket ?? parsed.positionals[0] ?? process.env.HIVE_AGENT_SOCKET;
  if (!path) fail('no socket path: pass --socket PATH (or PATH), or set HIVE_AGENT_SOCKET');
  return { path: resolve(path) };
}

function fail(message: string): never {
  process.stderr.write(`hive-agent-socket: ${message}\n`);
  process.exit(EXIT_USAGE);
}

const print = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

async function main(): Promise<void> {
  const socket = readSocketPath();
  if (socket === 'help') return void process.stdout.write(`${HELP}\n`);
  const { path } = socket;
  const board = new TodoBoard();
  let server;
  try {
    server = await serveTodoSocket(path, board, {
      onChange: print,
      onRefused: (line, error) =>
        process.stderr.write(`hive-agent-socket: refused ${JSON.stringify(line.slice(0, 200))}: ${error}\n`),
    });
  } catch (error) {
    fail(error instanceof SocketBusyError ? error.message : `cannot listen on ${path}: ${(error as Error).message}`);
  }
  print({ event: 'listening', socket: path });
  const stop = () => {
    server.close();
    rmSync(path, { force: true });
    print({ event: 'stopped', open_todos: board.list().length });
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

await main();
