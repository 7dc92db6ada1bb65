// The bare exec MCP server short-tasks measures the daemon against (issue 54): the least an MCP
// server that runs shell commands can do. Over stdio, with the official SDK's McpServer, one tool,
// `exec`: spawns `bash -c COMMAND`, waits for it, and answers its output and exit code. No task
// registry, output files, process groups, cgroups, limits, todos or HTTP: what the daemon costs on
// top of this is what those cost.
// Usage (an MCP client starts it): node dist/bench/bare-exec-server.js
import { spawn } from 'node:child_process';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/** Runs `command` under bash to its end: its stdout, stderr and exit code. */
function exec(command: string): Promise<{ stdout: string; stderr: string; exitCode: number | null }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => resolve({ stdout: '', stderr: error.message, exitCode: null }));
    child.on('close', (exitCode) =>
      resolve({ stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), exitCode }),
    );
  });
}

const server = new McpServer({ name: 'bare-exec', version: '1.0.0' });
server.registerTool(
  'exec',
  { description: 'Runs bash -c COMMAND and answers its output.', inputSchema: { command: z.string() } },
  async ({ command }) => {
    const { stdout, stderr, exitCode } = await exec(command);
    return {
      content: [{ type: 'text', text: stdout }],
      structuredContent: { stdout, stderr, exit_code: exitCode },
      isError: exitCode !== 0,
    };
  },
);
await server.connect(new StdioServerTransport());
