// Raw POSTs to the daemon's /mcp, answered whatever the body (over a bare socket past the 4 MiB
// limit), and the sessions the envelope fuzz opens, counts and closes.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'undici';
import type { TestDaemon } from '../../helpers/daemon.js';
import { INITIALIZE, MCP_HEADERS } from '../../helpers/raw-mcp.js';

/** A request that gets no HTTP answer in this time holds the connection: a failure. */
export const POST_TIMEOUT_MS = 10_000;
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** `payload` POSTed with `headers`, and the status, headers and text of the answer. */
export async function rawPost(
  url: string,
  headers: Record<string, string>,
  payload: string | Buffer,
  timeout = POST_TIMEOUT_MS,
): Promise<Answer> {
  if (Buffer.byteLength(payload) > MAX_BODY_BYTES) return socketPost(url, headers, payload, timeout);
  const res = await request(url, {
    method: 'POST',
    headers,
    body: payload,
    headersTimeout: timeout,
    bodyTimeout: timeout,
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

/**
 * POST over a bare socket, reading the answer whatever happens to the rest of the body: an HTTP
 * client that meets an early answer while still writing may drop it (undici does, now and then).
 * The daemon answers once it has read the whole body, so that none is lost to a reset.
 */
function socketPost(
  url: string,
  headers: Record<string, string>,
  payload: string | Buffer,
  timeout: number,
): Promise<Answer> {
  const { hostname, port, host, pathname } = new URL(url);
  const bytes = Buffer.isBuffer(payload) ? payload : Buffer.from(payload);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no answer in ${timeout} ms`)), timeout);
    let failure: Error | null = null;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') failure = error;
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
      if (failure !== null || split === -1 || status === null)
        return reject(failure ?? new Error(`no HTTP answer: ${JSON.stringify(text.slice(0, 200))}`));
      const answerHeaders: Record<string, string> = {};
      for (const line of text.slice(0, split).split('\r\n').slice(1)) {
        const colon = line.indexOf(':');
        answerHeaders[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let rest = text.slice(split + 4);
      if (answerHeaders['transfer-encoding'] === 'chunked') {
        let decoded = '';
        for (let size = parseInt(rest, 16); size > 0; size = parseInt(rest, 16)) {
          const start = rest.indexOf('\r\n') + 2;
          decoded += Buffer.from(rest.slice(start)).subarray(0, size).toString('utf8');
          rest = Buffer.from(rest.slice(start))
            .subarray(size + 2)
            .toString('utf8');
        }
        rest = decoded;
      }
      resolve({ status: Number(status[1]), headers: answerHeaders, text: rest });
    });
    const head = Object.entries({ ...headers, host, 'content-length': String(bytes.length), connection: 'close' })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.write(`POST ${pathname} HTTP/1.1\r\n${head}\r\n`);
    socket.end(bytes);
  });
}

/** How many sessions the daemon holds, as /healthz says. */
export async function healthSessions(daemon: TestDaemon): Promise<number> {
  const res = await request(new URL('/healthz', daemon.url), {
    headersTimeout: POST_TIMEOUT_MS,
    bodyTimeout: POST_TIMEOUT_MS,
  });
  return ((await res.body.json()) as { sessions: number }).sessions;
}

/** A session opened by an initialize, as a 2025 client opens one. */
export async function openSession(url: string): Promise<string> {
  const answer = await rawPost(url, MCP_HEADERS, JSON.stringify(INITIALIZE));
  assert.equal(answer.status, 200, answer.text);
  return answer.headers['mcp-session-id'] as string;
}

/** Closes `session` with a DELETE. */
export async function deleteSession(url: string, session: string): Promise<void> {
  const res = await request(url, {
    method: 'DELETE',
    headers: { 'mcp-session-id': session },
    headersTimeout: POST_TIMEOUT_MS,
    bodyTimeout: POST_TIMEOUT_MS,
  });
  await res.body.text();
}
