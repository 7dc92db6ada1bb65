// status: one task's state, exit and the end of its output; can wait for it to finish.
import { z } from 'zod';
import { defineTool, field } from '../tool.js';
import { tailBytesField, taskIdField, waitSecondsField } from '../fields.js';
import { snapshotTask } from '../../model/task-snapshot.js';
import { describeTask, taskViewSchema } from '../task-view.js';

export const statusTool = defineTool({
  name: 'status',
  title: 'Show a task',
  description:
    "Show a task's state (pending, running, done, timed_out, killed, interrupted), exit code, runtime and the last bytes of its stdout and stderr. With wait_seconds above 0 it blocks until the task finishes or that time passes. You are notified when a task ends, so use this to read a result or check progress, not to poll in a loop.",
  inputSchema: z.strictObject({
    id: taskIdField(),
    wait_seconds: waitSecondsField(0, 'Block until the task finishes or this many seconds pass (0 to 30, default 0: answer at once).'),
    tail_bytes: tailBytesField(),
    peek: field(
      z.boolean().default(false),
      'true or false',
      "Read without taking the result: a finished task's notification stays where it is. For observers (the operator's hive-bash uses it); an agent reading its own result leaves it false.",
    ),
  }),
  outputSchema: taskViewSchema,
  annotations: { readOnlyHint: true },
  async handler(input, { tasks }) {
    await tasks.waitForEnd(input.id, input.wait_seconds);
    const record = input.peek ? tasks.get(input.id) : tasks.handOver(input.id);
    const view = snapshotTask(record, input.tail_bytes, tasks.probes);
    return { structured: view, text: describeTask(view) };
  },
});
