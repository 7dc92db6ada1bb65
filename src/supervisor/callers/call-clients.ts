// Which client a call comes from, for taking turns on the pattern thread (pattern-turns.ts). A
// process of one of the daemon's tasks is its task, whatever sessions and connections it opens; a
// call outside them is its MCP session (a client sends calls made at once over as many connections
// as it likes, so a connection is no client); a 2026-07-28 call, which stands alone, is its
// connection. A client that opens more sessions or connections gets more turns: the daemon's
// limits on those (--max-sessions-per-peer, the connection table) bound how many.
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { TaskCallers } from './task-callers.js';

const connectionNumbers = new WeakMap<Socket, number>();
let nextConnection = 1;

/** The client request `from` comes from: `task ID`, `session ID` or `connection N`. */
export function clientOf(from: IncomingMessage, callers: TaskCallers): string {
  const caller = callers.of(from);
  if (caller.kind === 'task') return `task ${caller.taskId}`;
  const session = from.headers['mcp-session-id'];
  if (typeof session === 'string') return `session ${session}`;
  let number = connectionNumbers.get(from.socket);
  if (number === undefined) connectionNumbers.set(from.socket, (number = nextConnection++));
  return `connection ${number}`;
}
