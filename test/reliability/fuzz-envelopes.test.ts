// Property-based fuzz (fast-check) of raw JSON-RPC envelopes POSTed over HTTP (ids, methods,
// params, _meta, batches, responses, non-JSON bodies, headers, sizes, sessions), of both eras:
// 2025's sessions and 2026-07-28's per-request _meta with its MCP-Protocol-Version, Mcp-Method and
// Mcp-Name headers; and bodies near the 4 MiB limit. Whatever the input, every POST is answered in
// time with the right status and JSON-RPC error, never an internal one, and the daemon stays up,
// quiet in its error log, with no session left behind.
//
// Runs, seeds and shrinking as fuzz/runs.ts says (HIVE_FUZZ_RUNS, HIVE_FUZZ_SEED, HIVE_FUZZ_NO_SHRINK).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import fc from 'fast-check';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { assertHealthy, checkAnswer, describeArgs } from './fuzz/checks.js';
import { modernHeaders, rawCase } from './fuzz/envelopes.js';
import { MCP_HEADERS } from '../helpers/raw-mcp.js';
import { deleteSession, healthSessions, MAX_BODY_BYTES, openSession, rawPost } from './fuzz/http.js';
import { DAEMON_ARGS, params, TEST_TIMEOUT_MS } from './fuzz/runs.js';
import { TOOL_NAMES } from './fuzz/values.js';

test(
  'every raw POST, whatever its envelope, headers or session, is answered in time with the right JSON-RPC answer, and no session is left behind',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
    const tools = await connectClient(t, daemon.url); // session 1, for the checks afterwards
    const session = await openSession(daemon.url); // session 2, the one the fuzz talks to
    const closed = await openSession(daemon.url);
    await deleteSession(daemon.url, closed);
    assert.equal(await healthSessions(daemon), 2);
    let posts = 0;
    let opened = 0;
    /** Answers only the 2026-07-28 era gives: a resultType, or one of its own error codes. */
    let modern = 0;
    const slowest: Array<[number, number, string | Buffer]> = [];
    await fc.assert(
      fc.asyncProperty(rawCase, async ([payload, choice]) => {
        const headers: Record<string, string> = {};
        if (choice.contentType !== undefined) headers['content-type'] = choice.contentType;
        if (choice.accept !== undefined) headers.accept = choice.accept;
        if (choice.protocolVersion !== undefined) headers['mcp-protocol-version'] = choice.protocolVersion;
        Object.assign(headers, modernHeaders(choice, payload));
        const sessionHeader = {
          valid: session,
          none: undefined,
          unknown: randomUUID(),
          closed,
          garbage: choice.garbageSession,
        }[choice.session];
        if (sessionHeader !== undefined) headers['mcp-session-id'] = sessionHeader;
        posts++;
        const started = Date.now();
        const answer = await rawPost(daemon.url, headers, payload);
        const took = Date.now() - started;
        if (took > (slowest[0]?.[0] ?? 0)) slowest.unshift([took, answer.status, payload]);
        const announced = answer.headers['mcp-session-id'];
        if (typeof announced === 'string' && announced !== session) {
          // An initialize the fuzz sent without a session opened one, and said so: close it again.
          opened++;
          await deleteSession(daemon.url, announced);
        }
        const knownVersion =
          choice.protocolVersion === undefined ||
          choice.protocolVersion === '2026-07-28' ||
          SUPPORTED_PROTOCOL_VERSIONS.includes(choice.protocolVersion);
        const valid =
          choice.session === 'valid' &&
          choice.contentType === 'application/json' &&
          choice.accept === 'application/json, text/event-stream' &&
          knownVersion;
        checkAnswer(answer, payload, valid);
        if (/"resultType":|"code":-3202[012]\b/.test(answer.text)) modern++;
        assert.equal(await healthSessions(daemon), 2, 'a session the client was never told of is left open');
        const listed = await rawPost(
          daemon.url,
          { ...MCP_HEADERS, 'mcp-session-id': session },
          JSON.stringify({ jsonrpc: '2.0', id: `check-${posts}`, method: 'tools/list' }),
        );
        assert.equal(
          listed.status,
          200,
          `the session stopped serving after ${describeArgs(payload.toString())}: ${listed.text.slice(0, 300)}`,
        );
        assert.equal(JSON.parse(listed.text).result.tools.length, TOOL_NAMES.length);
      }),
      params(300),
    );
    t.diagnostic(
      `${posts} POSTs (${modern} answered as 2026-07-28); ${opened} sessions opened by a fuzzed initialize, each closed again`,
    );
    assert.ok(modern > 0, 'no POST reached the 2026-07-28 era');
    for (const [ms, status, sent] of slowest.slice(0, 3))
      t.diagnostic(`slow: ${ms} ms, ${status} to ${describeArgs(sent.toString()).slice(0, 160)}`);
    await assertHealthy(t, daemon, tools);
  },
);

test(
  'bodies near the 4 MiB limit are answered: JSON up to it, 413 beyond, and the daemon serves on',
  { timeout: TEST_TIMEOUT_MS },
  async (t) => {
    const daemon = await startTestDaemon(t, { args: DAEMON_ARGS });
    const tools = await connectClient(t, daemon.url);
    const session = await openSession(daemon.url);
    const headers = { ...MCP_HEADERS, 'mcp-session-id': session };
    const shapes = ['argument', 'meta', 'id', 'batch', 'broken'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...shapes),
        fc.integer({ min: MAX_BODY_BYTES - 2048, max: MAX_BODY_BYTES + 2048 }),
        async (shape, size) => {
          // A body of exactly `size` bytes: a long string inside a message, or a broken one.
          const around = (pad: string) => {
            const skeleton = {
              argument: (p: string) =>
                `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list","arguments":{"state":"${p}"}}}`,
              meta: (p: string) => `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"pad":"${p}"}}}`,
              id: (p: string) => `{"jsonrpc":"2.0","id":"${p}","method":"ping"}`,
              batch: (p: string) =>
                `[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized","params":{"pad":"${p}"}}]`,
              broken: (p: string) => `{"jsonrpc":"2.0","id":4,"method":"ping","params":"${p}`,
            }[shape];
            return skeleton(pad);
          };
          const payload = around('x'.repeat(Math.max(0, size - around('').length)));
          const answer = await rawPost(daemon.url, headers, payload);
          if (Buffer.byteLength(payload) > MAX_BODY_BYTES) {
            assert.equal(answer.status, 413, `${shape} of ${Buffer.byteLength(payload)} bytes`);
            assert.equal(JSON.parse(answer.text).error.code, -32600);
          } else {
            checkAnswer(answer, payload, true);
            // An id is echoed as sent, whatever its length; nothing else is.
            if (shape !== 'id')
              assert.ok(
                answer.text.length <= 64 * 1024,
                `${shape} of ${payload.length} bytes: an answer of ${answer.text.length} chars`,
              );
          }
          assert.equal(await healthSessions(daemon), 2);
        },
      ),
      params(8),
    );
    await assertHealthy(t, daemon, tools);
  },
);
