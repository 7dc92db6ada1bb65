// input: writes to the stdin of a task started with interactive: true.
import { z } from 'zod';
import { InputRefusedError } from '../../../errors.js';
import { beyondCallerSandbox, runCallerOf } from '../../callers/task-callers.js';
import { TASK_STATES } from '../../../shared/task-states.js';
import { describeSandbox } from '../../../shared/sandbox.js';
import { defineTool, field } from '../tool.js';
import { inputTextField, taskIdField } from '../shared-fields.js';

export const inputTool = defineTool({
  name: 'input',
  title: "Write to a task's stdin",
  description:
    'Write text, as given (end a line with "\\n"), to the stdin of a task started with interactive: true. Read the reply with output.',
  inputSchema: z.strictObject({
    id: taskIdField(),
    text: inputTextField('Text, at most 1 MiB.', true),
    eof: field(z.boolean().default(false), 'true or false', 'Then close stdin.'),
  }),
  outputSchema: z.object({
    id: z.string().describe('The task id'),
    state: z.enum(TASK_STATES).describe('The state of the task'),
    bytes_written: z.number().int().describe('Bytes of text written (UTF-8)'),
    pending_bytes: z
      .number()
      .int()
      .describe('Bytes the task has not read yet, after a second (its stdin is full: it is not reading)'),
    stdin_open: z.boolean().describe('Whether further input is taken'),
    message: z.string().describe('What happened, in words'),
  }),
  annotations: { destructiveHint: true, openWorldHint: false },
  async handler(input, { tasks, callers }, from) {
    // Input runs as the task that reads it: a sandboxed task may drive only tasks as confined as itself.
    const caller = runCallerOf(callers.of(from), 'input');
    if (caller?.sandbox) {
      const beyond = beyondCallerSandbox(tasks.get(input.id).sandbox, caller);
      if (beyond !== null)
        throw new InputRefusedError(
          input.id,
          'ERR_INPUT_NOT_ALLOWED',
          `the call comes from task ${caller.taskId}, whose sandbox allows at most: ${describeSandbox(caller.sandbox)}; task ${input.id} is not confined within it (${beyond}), and input runs as that task; nothing was written: a sandboxed task may write only to the stdin of tasks sandboxed at least as narrowly`,
        );
    }
    const { record, pendingBytes, stdinOpen } = await tasks.input(input.id, input.text, input.eof);
    const bytes = Buffer.byteLength(input.text);
    const waiting =
      pendingBytes > 0 ? `; ${pendingBytes} of them not read yet (the task is not reading its stdin)` : '';
    const message = `wrote ${bytes} bytes to the stdin of task ${record.id}${waiting}${stdinOpen ? '' : '; stdin is now closed'}`;
    return {
      structured: {
        id: record.id,
        state: record.state,
        bytes_written: bytes,
        pending_bytes: pendingBytes,
        stdin_open: stdinOpen,
        message,
      },
      text: message,
    };
  },
});
