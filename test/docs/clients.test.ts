// docs/clients.md: each client's snippet, parsed out of the page, names the daemon's URL and the
// fields that client needs, and each client's section names the era of MCP it speaks.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEFAULT_URL } from '../../src/cli/client.js';

const PAGE = readFileSync(new URL('../../../docs/clients.md', import.meta.url), 'utf8');
const CLIENTS = ['Claude Code', 'Gemini CLI', 'Codex', 'opencode', 'Qwen Code', 'mcp-remote', 'MCP Inspector'];

/** The section under the `## ` heading that starts with `title`. */
function section(title: string): string {
  const start = PAGE.split(/^## /m).find((part) => part.startsWith(title));
  assert.ok(start, `docs/clients.md has a section "${title}"`);
  return start;
}

/** The code blocks of a section in the language given, in order. */
function blocks(text: string, language: string): string[] {
  return [...text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)]
    .filter((match) => match[1] === language)
    .map((match) => match[2]!);
}

/** `[table]` and `key = "value"` lines: the TOML a Codex snippet is written in. */
function parseToml(text: string): Record<string, Record<string, string>> {
  const tables: Record<string, Record<string, string>> = {};
  let table: Record<string, string> | undefined;
  for (const line of text.split('\n').filter((line) => line.trim() !== '')) {
    const header = /^\[([^\]]+)\]$/.exec(line);
    const pair = /^(\w+) = "([^"]*)"$/.exec(line);
    if (header) tables[header[1]!] = table = {};
    else if (pair && table) table[pair[1]!] = pair[2]!;
    else assert.fail(`a TOML line this test does not read: ${line}`);
  }
  return tables;
}

test('every client names the era of MCP it speaks', () => {
  for (const client of CLIENTS) assert.match(section(client), /^Era: .*(2026-07-28|2025|either)/m, client);
  assert.equal(DEFAULT_URL, 'http://127.0.0.1:7433/mcp');
});

test('the Claude Code snippets add the daemon by its URL over HTTP, with the bearer header', () => {
  const text = section('Claude Code');
  const [commands] = blocks(text, 'sh');
  assert.ok(commands!.includes(`claude mcp add --transport http bash ${DEFAULT_URL}\n`));
  assert.ok(commands!.includes(`claude mcp add --transport http bash ${DEFAULT_URL} --header "Authorization: Bearer `));
  const server = JSON.parse(blocks(text, 'json')[0]!).mcpServers.bash;
  assert.deepEqual([server.type, server.url], ['http', DEFAULT_URL]);
  assert.match(server.headers.Authorization, /^Bearer \$\{HIVE_BASH_TOKEN\}$/);
});

test('the Gemini CLI and Qwen Code snippets use httpUrl and trust, and Gemini CLI trusts the folder', () => {
  for (const client of ['Gemini CLI', 'Qwen Code']) {
    const server = JSON.parse(blocks(section(client), 'json')[0]!).mcpServers.bash;
    assert.deepEqual([server.httpUrl, server.trust, server.url], [DEFAULT_URL, true, undefined], client);
    assert.match(server.headers.Authorization, /^Bearer \$HIVE_BASH_TOKEN$/, client);
  }
  const trusted = JSON.parse(blocks(section('Gemini CLI'), 'json')[1]!);
  assert.deepEqual(Object.values(trusted), ['TRUST_FOLDER']);
});

test('the Codex snippet names url, the token variable and approve', () => {
  const tables = parseToml(blocks(section('Codex'), 'toml')[0]!);
  assert.deepEqual(tables, {
    'mcp_servers.bash': {
      url: DEFAULT_URL,
      bearer_token_env_var: 'HIVE_BASH_TOKEN',
      default_tools_approval_mode: 'approve',
    },
  });
});

test('the opencode snippet is a remote server without OAuth', () => {
  const config = JSON.parse(blocks(section('opencode'), 'json')[0]!);
  const server = config.mcp.bash;
  assert.deepEqual([server.type, server.url, server.enabled, server.oauth], ['remote', DEFAULT_URL, true, false]);
  assert.equal(server.headers.Authorization, 'Bearer {env:HIVE_BASH_TOKEN}');
});

test('the mcp-remote snippet starts it on the daemon URL, over HTTP only, with the header from the environment', () => {
  const server = JSON.parse(blocks(section('mcp-remote'), 'json')[0]!).mcpServers.bash;
  assert.equal(server.command, 'npx');
  assert.match(server.args[1], /^mcp-remote@\d+\.\d+\.\d+$/);
  assert.deepEqual(server.args.slice(2), [
    DEFAULT_URL,
    '--transport',
    'http-only',
    '--header',
    'Authorization:${HIVE_BASH_AUTH}',
  ]);
  assert.match(server.env.HIVE_BASH_AUTH, /^Bearer /);
});

test('the Inspector commands name the daemon URL and the era', () => {
  const [commands] = blocks(section('MCP Inspector'), 'sh');
  assert.ok(
    commands!.includes(
      `npx @modelcontextprotocol/inspector@2.12.0 --cli ${DEFAULT_URL} --protocol-era modern --method tools/list`,
    ),
  );
});

test('the README links the page', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  assert.match(readme, /\(docs\/clients\.md\)/);
});
