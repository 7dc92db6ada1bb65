// The GET stream of a 2025 session (server-sent events): the messages the server sends a session's
// client outside any request (the channel events of the tasks it holds). One stream at a time, as
// streamable HTTP allows; what is sent while none is open waits for the next (the newest
// MAX_WAITING), so that a client that reconnects misses nothing. So does what is sent while the open
// one's client does not read (its buffer is full): written once it drains, so an unread stream costs
// the daemon a socket's buffer and MAX_WAITING messages, not every message (20 such streams and
// 6,400 events took 50 MB). A comment every KEEPALIVE_MS keeps proxies and clients with idle
// timeouts from dropping a quiet stream.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendRpcError, transportRefusal } from './json-rpc.js';

export const MAX_WAITING = 64;
const KEEPALIVE_MS = 20_000;

export class SessionStream {
  private res: ServerResponse | null = null;
  private readonly waiting: string[] = [];
  private keepalive: NodeJS.Timeout | null = null;

  get open(): boolean {
    return this.res !== null;
  }

  /** Serves a GET that opens the stream; resolves once it closes (the client went away, or the session closed). */
  serve(req: IncomingMessage, res: ServerResponse, sessionId: string): Promise<void> {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      sendRpcError(res, transportRefusal(406, 'Not Acceptable: Client must accept text/event-stream'));
      return Promise.resolve();
    }
    if (this.res !== null) {
      sendRpcError(res, transportRefusal(409, 'Conflict: Only one SSE stream is allowed per session'));
      return Promise.resolve();
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'mcp-session-id': sessionId,
    });
    res.flushHeaders();
    this.res = res;
    this.keepalive = setInterval(() => {
      if (!res.writableNeedDrain) res.write(': keepalive\n\n');
    }, KEEPALIVE_MS).unref();
    res.on('drain', () => this.flush());
    this.flush();
    return new Promise((resolve) => {
      res.once('close', () => {
        if (this.res === res) this.detach();
        resolve();
      });
    });
  }

  /** Sends a JSON-RPC notification on the stream, or keeps it until the stream can take it. */
  notify(method: string, params: Record<string, unknown>): void {
    this.waiting.push(JSON.stringify({ jsonrpc: '2.0', method, params }));
    if (this.waiting.length > MAX_WAITING) this.waiting.shift();
    this.flush();
  }

  /** Ends the stream (the session closed). */
  close(): void {
    const res = this.res;
    this.detach();
    this.waiting.length = 0;
    res?.end();
  }

  /** Writes what waits, in order, while the open stream's buffer takes it. */
  private flush(): void {
    const res = this.res;
    while (res !== null && !res.writableNeedDrain && this.waiting.length > 0)
      res.write(`event: message\ndata: ${this.waiting.shift()!}\n\n`);
  }

  private detach(): void {
    if (this.keepalive !== null) clearInterval(this.keepalive);
    this.keepalive = null;
    this.res = null;
  }
}
