// Clients that open MCP sessions by the thousand cannot close a session that is in use: a session
// used within the last minute is never closed to make room, and an initialize past the limits (in
// all, and per peer) is refused while every session is that recent. The limits of the second test
// come through HIVE_BASH_* variables, which a daemon without them ignores.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Agent, request } from 'undici';
import { healthz } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

const PARALLEL = 8;

interface Answer {
  status: number;
  sessionId: string | null;
  retryAfter: string | null;
  message: string | null;
}

/** An initialize from `peer` (a loopback address the connection is made from). */
async function initialize(url: string, dispatcher: Agent): Promise<Answer> {
  const res = await request(url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify(INITIALIZE),
    dispatcher,
  });
  const body = (await res.body.json()) as { error?: { message: string } };
  const header = (name: string) => (res.headers[name] as string | undefined) ?? null;
  return {
    status: res.statusCode,
    sessionId: header('mcp-session-id'),
    retryAfter: header('retry-after'),
    message: body.error?.message ?? null,
  };
}

/** A dispatcher whose connections come from `peer`. */
function from(t: { after(fn: () => Promise<void>): void }, peer: string): Agent {
  const agent = new Agent({ localAddress: peer });
  t.after(() => agent.close());
  return agent;
}

const perPeerRefusal = (peer: string, limit: number) =>
  `Too many MCP sessions from ${peer}: it holds ${limit} (--max-sessions-per-peer), each used within the last 60 s, so none was closed for a new one; reuse a session, end one you no longer need (DELETE /mcp with its Mcp-Session-Id), or initialize again later`;

test('a session used within the minute survives 1,010 initializes, and those past the limit are refused', async (t) => {
  const daemon = await startTestDaemon(t);
  const live = await connectClient(t, daemon.url);
  await live.ok('list', {});
  const local = from(t, '127.0.0.1');
  const answers: Answer[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < 1010) {
        next++;
        answers.push(await initialize(daemon.url, local));
      }
    }),
  );
  assert.equal((await live.ok('run', { command: 'echo still here' })).stdout_tail, 'still here\n');
  const refused = answers.filter((answer) => answer.status !== 200);
  assert.ok(refused.length > 0, 'every one of 1,010 initializes opened a session: some session was closed for them');
  for (const answer of refused) {
    assert.deepEqual(answer, {
      status: 429,
      sessionId: null,
      retryAfter: '60',
      message: perPeerRefusal('127.0.0.1', 500),
    });
  }
  assert.equal(answers.length - refused.length, 499, 'the live session and 499 more make the 500 of one peer');
  assert.equal((await healthz(daemon.origin)).sessions, 500);
});

test('initializes past the limits per peer and in all are refused while every session is recent', async (t) => {
  const daemon = await startTestDaemon(t, {
    env: { HIVE_BASH_MAX_SESSIONS: '8', HIVE_BASH_MAX_SESSIONS_PER_PEER: '5' },
  });
  const [second, third, fourth] = ['127.0.0.2', '127.0.0.3', '127.0.0.4'].map((peer) => from(t, peer));
  const fromSecond: Answer[] = [];
  for (let i = 0; i < 6; i++) fromSecond.push(await initialize(daemon.url, second!));
  assert.deepEqual(
    fromSecond.map((answer) => answer.status),
    [200, 200, 200, 200, 200, 429],
  );
  assert.equal(fromSecond[5]!.message, perPeerRefusal('127.0.0.2', 5));
  // Another peer still has room, up to the limit in all.
  const fromThird: Answer[] = [];
  for (let i = 0; i < 4; i++) fromThird.push(await initialize(daemon.url, third!));
  assert.deepEqual(
    fromThird.map((answer) => answer.status),
    [200, 200, 200, 503],
  );
  assert.deepEqual(fromThird[3], {
    status: 503,
    sessionId: null,
    retryAfter: '60',
    message:
      'Too many MCP sessions: 8 are open (--max-sessions), each used within the last 60 s, so none was closed for a new one; reuse a session, end one you no longer need (DELETE /mcp with its Mcp-Session-Id), or initialize again later',
  });
  // A session ended makes room for one.
  const ended = await request(daemon.url, {
    method: 'DELETE',
    headers: { 'mcp-session-id': fromSecond[0]!.sessionId!, 'mcp-protocol-version': '2025-06-18' },
  });
  assert.equal(ended.statusCode, 200);
  await ended.body.dump();
  assert.equal((await initialize(daemon.url, fourth!)).status, 200);
  assert.equal((await healthz(daemon.origin)).sessions, 8);
});
