// A fake Anthropic Messages API on loopback for driving a real Claude Code (ANTHROPIC_BASE_URL): it
// answers every POST /v1/messages as a stream of server-sent events, scripting the model's turns.
// The turn that carries the daemon's tools is the agent's: `script` picks its answer from what the
// model has seen so far (a tool call, or text); every other request (titles, summaries, quota
// checks) gets a short text. Each request's body is kept for the caller to read.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the model says on one turn: a tool call, or text that ends the turn. */
export type Turn = { tool: string; input: Record<string, unknown> } | { text: string };

/** The turn to answer the agent's request with, given its messages as one text (tool results and channel events included). */
export type Script = (seen: string, request: any) => Turn;

export interface FakeModel {
  url: string;
  /** The agent's requests (those with the daemon's tools), in order. */
  requests: any[];
  /** Every request's body, in order (for a look when something went wrong). */
  all: any[];
  /** Resolves with the first agent request whose text `match` accepts (now or to come). */
  next(match: (seen: string) => boolean, timeoutMs: number, what: string): Promise<string>;
  close(): Promise<void>;
}

/** Everything the agent's request shows the model, as one text. */
export function seenText(body: any): string {
  const parts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') parts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value !== null && typeof value === 'object')
      for (const key of ['text', 'content'] as const) walk((value as Record<string, unknown>)[key]);
  };
  walk(body.messages);
  return parts.join('\n');
}

export async function startFakeModel(script: Script): Promise<FakeModel> {
  const requests: any[] = [];
  const all: any[] = [];
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    void readJson(req).then((body) => {
      if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages') || req.url.includes('count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens": 10}');
        return;
      }
      all.push({ url: req.url, body });
      const agent = Array.isArray(body.tools) && body.tools.some((tool: any) => /^mcp__bash__/.test(tool.name));
      if (agent) {
        requests.push(body);
        for (const wake of waiters.splice(0)) wake();
      }
      const turn = agent ? script(seenText(body), body) : { text: 'ok' };
      answer(res, body, turn);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const next = async (match: (seen: string) => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = requests.map(seenText).find(match);
      if (found !== undefined) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`the model was not asked with ${what} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url: `http://127.0.0.1:${port}`, requests, all, next, close };
}

async function readJson(req: IncomingMessage): Promise<any> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return {};
  }
}

let nextToolId = 1;

/** Answers with `turn`, streamed (as Claude Code asks) or as one JSON message. */
function answer(res: import('node:http').ServerResponse, body: any, turn: Turn): void {
  const block =
    'tool' in turn
      ? { type: 'tool_use', id: `toolu_fake${nextToolId++}`, name: turn.tool, input: turn.input }
      : { type: 'text', text: turn.text };
  const stop = 'tool' in turn ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 10, output_tokens: 5 };
  const message = { id: `msg_fake${nextToolId}`, type: 'message', role: 'assistant', model: body.model ?? 'fake' };
  if (body.stream !== true) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, content: [block], stop_reason: stop, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  send('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage } });
  if (block.type === 'tool_use') {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } });
    const partial_json = JSON.stringify(block.input);
    send('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'input_json_delta', partial_json },
    });
  } else {
    send('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    send('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: block.text },
    });
  }
  send('content_block_stop', { type: 'content_block_stop', index: 0 });
  send('message_delta', { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage });
  send('message_stop', { type: 'message_stop' });
  res.end();
}
