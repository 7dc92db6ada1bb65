// What the fuzz asserts of every answer: a tool error the daemon means, a JSON-RPC answer with the
// right status and code, every request answered with its own id; and, after each property, a
// daemon still serving with no task left and nothing logged at error level.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { withTimeout } from '../../../src/with-timeout.js';
import type { TestDaemon } from '../../helpers/daemon.js';
import type { ToolClient } from '../../helpers/mcp-client.js';
import { type Answer, POST_TIMEOUT_MS } from './http.js';
import { TOOL_NAMES } from './values.js';

const KNOWN_TOOL_ERRORS = new Set([
  'ERR_INVALID_INPUT',
  'ERR_UNKNOWN_TASK',
  'ERR_NAME_BUSY',
  'ERR_PORT_BUSY',
  'ERR_QUEUE_FULL',
  'ERR_STATE_DIR_FULL',
  'ERR_INPUT_NOT_INTERACTIVE',
  'ERR_INPUT_PENDING',
  'ERR_INPUT_ENDED',
  'ERR_INPUT_STDIN_CLOSED',
  'ERR_INPUT_NO_ANSWER',
  'ERR_INPUT_WRITE_FAILED',
  'ERR_SANDBOX_NOT_ALLOWED',
  'ERR_SANDBOX_UNAVAILABLE',
  'ERR_LIMIT_UNAVAILABLE',
  'ERR_PATTERN_TOO_COSTLY',
  'ERR_SCREEN_TOO_COSTLY',
]);
const JSON_RPC_ERRORS = new Set([-32700, -32600, -32601, -32602, -32000, -32001, -32020, -32021, -32022]);
const HTTP_STATUSES = new Set([200, 202, 400, 404, 405, 406, 413, 415]);
/** A tool error is a sentence or a few; this bounds what any input can make the daemon echo. */
export const MAX_ERROR_TEXT = 16 * 1024;
/** What `withTimeout` gives for a call that got no answer in time; the property fails on it. */
export const TIMED_OUT = Symbol('timed out');

/** A value as JSON for a failure message, long ones cut. */
export function describeArgs(value: unknown): string {
  if (typeof value === 'string')
    return value.length > 300
      ? `${JSON.stringify(value.slice(0, 300))}... (${value.length} chars)`
      : JSON.stringify(value);
  try {
    const text = JSON.stringify(value);
    return text.length > 300 ? `${text.slice(0, 300)}... (${text.length} chars)` : text;
  } catch (error) {
    return `(unprintable: ${(error as Error).message})`;
  }
}

/** A tool error the daemon means: a known code, a bounded message, nothing internal. */
export function assertToolError(structured: any, text: string, what: string): void {
  const code = structured?.error?.code;
  assert.ok(KNOWN_TOOL_ERRORS.has(code), `unknown or internal code ${code} for ${what}: ${text.slice(0, 500)}`);
  assert.equal(structured.error.message, text, what);
  assert.ok(text.length <= MAX_ERROR_TEXT, `an error of ${text.length} chars for ${what}`);
  assert.doesNotMatch(text, /internal error|Maximum call stack/i, what);
}

/** Error (50) and fatal (60) lines of the daemon's log; none is expected from any input. */
export function errorLines(daemon: TestDaemon): string[] {
  return daemon
    .stderr()
    .split('\n')
    .filter((line) => /"level":(50|60)\b/.test(line));
}

/** Kills whatever is still pending or running and waits until nothing is. */
async function killEverything(tools: ToolClient): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { tasks } = await tools.ok('list', { limit: 1000 });
    const live = (tasks as Array<{ id: string; state: string }>).filter(
      (task) => task.state === 'pending' || task.state === 'running',
    );
    if (live.length === 0) return;
    assert.ok(
      Date.now() < deadline,
      `tasks left running: ${live.map((task) => `${task.id} ${task.state}`).join(', ')}`,
    );
    for (const task of live) await tools.call('kill', { id: task.id, force: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The daemon still up and serving its tools, no task left running, nothing logged at error level. */
export async function assertHealthy(t: TestContext, daemon: TestDaemon, tools: ToolClient): Promise<void> {
  assert.equal(daemon.child.exitCode, null, `the daemon exited:\n${daemon.stderr()}`);
  assert.equal(daemon.child.signalCode, null, `the daemon was killed:\n${daemon.stderr()}`);
  const listed = await withTimeout(tools.client.listTools(), POST_TIMEOUT_MS, TIMED_OUT);
  if (listed === TIMED_OUT) assert.fail(`tools/list after the fuzz got no answer within ${POST_TIMEOUT_MS} ms`);
  assert.deepEqual(
    listed.tools.map((tool) => tool.name),
    [...TOOL_NAMES],
  );
  await killEverything(tools);
  assert.deepEqual(errorLines(daemon), [], 'the daemon logged an error');
  t.diagnostic(`daemon healthy; ${daemon.stderr().split('\n').filter(Boolean).length} log lines (warn and above)`);
}

/** The id a response to `member` must carry, or undefined when none is owed. */
function owedId(member: unknown): string | number | undefined {
  if (member === null || typeof member !== 'object' || Array.isArray(member)) return undefined;
  const { method: name, id } = member as { method?: unknown; id?: unknown };
  if (typeof name !== 'string') return undefined;
  return typeof id === 'string' || Number.isSafeInteger(id) ? (id as string | number) : undefined;
}

const sameId = (a: unknown, b: unknown) => a === b || (typeof a === 'number' && typeof b === 'number' && a === b);

/** One JSON-RPC response as the daemon must write it. */
function checkResponse(response: any, where: string): void {
  assert.ok(response !== null && typeof response === 'object' && !Array.isArray(response), `${where}: not an object`);
  assert.equal(response.jsonrpc, '2.0', where);
  assert.ok('result' in response !== 'error' in response, `${where}: needs exactly one of result and error`);
  if ('error' in response) {
    assert.ok(
      JSON_RPC_ERRORS.has(response.error.code),
      `${where}: JSON-RPC error ${response.error.code} ${response.error.message}`,
    );
    assert.equal(typeof response.error.message, 'string', where);
    assert.ok(
      response.error.message.length <= MAX_ERROR_TEXT,
      `${where}: an error message of ${response.error.message.length} chars`,
    );
    assert.doesNotMatch(response.error.message, /internal error|Maximum call stack|Invalid tools\/call result/i, where);
  } else if (response.result?.isError === true) {
    const text = (response.result.content as Array<{ text?: string }>).map((part) => part.text ?? '').join('');
    assertToolError(response.result.structuredContent, text, where);
  }
}

/** An answer to a raw POST as the daemon must give it; `valid`: the session took the message, so every request in it is owed an answer. */
export function checkAnswer(answer: Answer, sent: string | Buffer, valid: boolean): void {
  const where = `POST ${describeArgs(Buffer.isBuffer(sent) ? `<bytes ${sent.toString('hex')}>` : sent)} -> ${answer.status} ${answer.text.slice(0, 300)}`;
  assert.ok(HTTP_STATUSES.has(answer.status), `${where}: unexpected status`);
  if (answer.status === 202) {
    assert.equal(answer.text, '', where);
    return;
  }
  assert.match(String(answer.headers['content-type']), /^application\/json/, where);
  let json: any;
  assert.doesNotThrow(() => (json = JSON.parse(answer.text)), `${where}: not JSON`);
  if (Array.isArray(json)) {
    assert.equal(answer.status, 200, where);
    json.forEach((response, i) => checkResponse(response, `${where} [${i}]`));
  } else {
    checkResponse(json, where);
    if (answer.status !== 200) assert.ok('error' in json, `${where}: a refusal without an error`);
  }
  // Every request of a message the session took is answered, each with its own id.
  if (!valid || Buffer.isBuffer(sent)) return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(sent);
  } catch {
    return;
  }
  const members = Array.isArray(parsed) ? parsed : [parsed];
  if (members.some((member) => (member as { method?: unknown } | null)?.method === 'notifications/cancelled')) return;
  const owed = members.map(owedId).filter((id) => id !== undefined);
  if (answer.status === 200) {
    const answers = Array.isArray(json) ? json : [json];
    for (const id of owed)
      assert.ok(
        answers.some((response: any) => sameId(response.id, id)),
        `${where}: no answer for id ${JSON.stringify(id)}`,
      );
    assert.ok(answers.length <= members.length, `${where}: more answers than messages`);
  } else if (answer.status === 202) {
    assert.deepEqual(owed, [], `${where}: requests left unanswered`);
  }
}
