// Which MCP session makes room for a new one: the one used longest ago, never one used within the
// last minute, never one with a request in flight, and of the peer when a peer's limit is reached.
// The rule on plain data with a clock of the test's, since a real session needs a minute to age.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SESSION_RECENT_MS, sessionToClose, type SessionUse } from '../../src/supervisor/mcp/sessions.js';

const NOW = 10_000_000;
const ago = (ms: number, peer = 'a', active = 0): SessionUse => ({ lastSeen: NOW - ms, active, peer });
const choose = (sessions: Array<[string, SessionUse]>, peer: string | null = null) =>
  sessionToClose(sessions, NOW, peer)?.[0];

test('the session used longest ago goes, if that was a minute ago or more', () => {
  const sessions: Array<[string, SessionUse]> = [
    ['old', ago(SESSION_RECENT_MS + 5_000)],
    ['minute', ago(SESSION_RECENT_MS)],
    ['recent', ago(1_000)],
  ];
  assert.equal(choose(sessions), 'old');
  assert.equal(choose(sessions.slice(1)), 'minute');
});

test('a session used within the minute never goes: then none does', () => {
  assert.equal(choose([['recent', ago(SESSION_RECENT_MS - 1)]]), undefined);
  assert.equal(
    choose([
      ['a', ago(30_000)],
      ['b', ago(1)],
    ]),
    undefined,
  );
  assert.equal(choose([]), undefined);
});

test('a session with a request in flight never goes, however long ago it started', () => {
  const sessions: Array<[string, SessionUse]> = [
    ['waiting', ago(SESSION_RECENT_MS * 10, 'a', 1)],
    ['idle', ago(SESSION_RECENT_MS * 2)],
  ];
  assert.equal(choose(sessions), 'idle');
  assert.equal(choose(sessions.slice(0, 1)), undefined);
});

test("for a peer's limit, the peer's own session goes, never another's", () => {
  const sessions: Array<[string, SessionUse]> = [
    ['other', ago(SESSION_RECENT_MS * 3, 'b')],
    ['mine', ago(SESSION_RECENT_MS * 2, 'a')],
    ['mine-recent', ago(1_000, 'a')],
  ];
  assert.equal(choose(sessions, 'a'), 'mine');
  assert.equal(choose(sessions, 'b'), 'other');
  assert.equal(choose(sessions, 'c'), undefined);
  assert.equal(choose(sessions), 'other');
});
