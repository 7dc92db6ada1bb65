// A real MCP client (the SDK's) over real HTTP to a test daemon.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { TestContext } from 'node:test';
import { waitFor } from './processes.js';
import { askWhole } from './raw-mcp.js';

export interface ToolClient {
  client: Client;
  /** The raw result: check isError yourself. */
  call(name: string, args?: Record<string, unknown>): Promise<{ isError?: boolean; text: string; structured: any }>;
  /** The structured content of a call that must succeed. */
  ok(name: string, args?: Record<string, unknown>): Promise<any>;
  /** The text of a call that must fail with a tool error. */
  error(name: string, args?: Record<string, unknown>): Promise<string>;
  /**
   * Polls `status` of `id` (with `args`) until `check` holds for its view, and returns that view;
   * fails with `what` if it does not within `timeoutMs`.
   */
  statusWhen(
    id: string,
    check: (view: any) => boolean,
    what: string,
    timeoutMs?: number,
    args?: Record<string, unknown>,
  ): Promise<any>;
}

export async function connectClient(
  t: TestContext,
  url: string,
  headers: Record<string, string> = {},
): Promise<ToolClient> {
  const client = new Client({ name: 'hive-bash-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  await client.listTools(); // caches the output schemas, so every structured result is validated
  t.after(() => client.close().catch(() => {}));
  const call: ToolClient['call'] = async (name, args = {}) => {
    const result = await client.callTool({ name, arguments: askWhole(name, args) }, undefined, { timeout: 120_000 });
    const text = (result.content as Array<{ type: string; text?: string }>).map((part) => part.text ?? '').join('');
    return { isError: result.isError as boolean | undefined, text, structured: result.structuredContent };
  };
  const ok: ToolClient['ok'] = async (name, args) => {
    const result = await call(name, args);
    assert.notEqual(result.isError, true, `${name} failed: ${result.text}`);
    return result.structured;
  };
  return {
    client,
    call,
    ok,
    async error(name, args) {
      const result = await call(name, args);
      assert.equal(result.isError, true, `${name} should have failed but returned: ${result.text}`);
      return result.text;
    },
    async statusWhen(id, check, what, timeoutMs = 15_000, args = {}) {
      const view = await waitFor(async () => {
        const status = await ok('status', { id, ...args });
        return check(status) ? status : null;
      }, timeoutMs);
      assert.ok(view, what);
      return view;
    },
  };
}
