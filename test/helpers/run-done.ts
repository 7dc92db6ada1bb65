// A run followed to its end, for tests whose task must finish by itself before they look at it.
import assert from 'node:assert/strict';
import type { ToolClient } from './mcp-client.js';

/** Runs a task to its end (on a slow machine a wait may pass first) and checks it ended by itself. */
export async function runDone(tools: ToolClient, args: { command: string } & Record<string, unknown>): Promise<any> {
  let task = await tools.ok('run', { wait_seconds: 30, ...args });
  for (let waits = 0; task.state === 'running' && waits < 4; waits++)
    task = await tools.ok('status', { id: task.id, wait_seconds: 30 });
  assert.equal(task.state, 'done', `${args.command}: ${task.state}, ${task.stderr_tail}`);
  return task;
}
