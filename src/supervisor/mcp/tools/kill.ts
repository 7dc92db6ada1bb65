// kill: ends a task and everything it started, without waiting.
import { z } from 'zod';
import { KILL_SIGNALS } from '../../../shared/signals.js';
import { isFinished, TASK_STATES } from '../../../shared/task-states.js';
import { killEndAdvice } from '../end-notice.js';
import { defineTool, field } from '../tool.js';
import { taskIdField } from '../shared-fields.js';

export const killTool = defineTool({
  name: 'kill',
  title: 'Stop a task and everything it started',
  description: (advice) =>
    `Stop a task: the signal (default SIGINT) goes to every process it started, SIGKILL after a grace period. ${killEndAdvice(advice)}`,
  inputSchema: z.strictObject({
    id: taskIdField(),
    force: field(z.boolean().default(false), 'true or false', 'SIGKILL at once.'),
    signal: field(
      z.enum(KILL_SIGNALS).optional(),
      `one of ${KILL_SIGNALS.join(', ')}`,
      'First signal instead of SIGINT, e.g. SIGTERM.',
    ),
  }),
  outputSchema: z.object({
    id: z.string().describe('The task id'),
    state: z.enum(TASK_STATES).describe('The state at the time of the call (kill does not wait for the end)'),
    signal: z.enum(KILL_SIGNALS).nullable().describe('The signal sent, or null when there was nothing to signal'),
    message: z.string().describe('What happened, in words'),
  }),
  annotations: { destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async handler(input, { tasks }) {
    const signal = input.force ? 'SIGKILL' : (input.signal ?? 'SIGINT');
    const { record, signal: sent, lingering } = await tasks.kill(input.id, signal);
    let message: string;
    if (record.state === 'killed' && sent === null && record.startedAt === null)
      message = `task ${record.id} was cancelled before it started`;
    else if (!isFinished(record.state))
      message = `sent ${sent} to task ${record.id}; anything still alive after the grace period gets SIGKILL`;
    else if (lingering > 0)
      message = `task ${record.id} had already finished (${record.state}); sent ${sent} to the ${lingering} process(es) it left running`;
    else message = `task ${record.id} had already finished (${record.state}) and nothing of it is left running`;
    return { structured: { id: record.id, state: record.state, signal: sent, message }, text: message };
  },
});
