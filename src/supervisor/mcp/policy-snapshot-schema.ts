// What the operator's command policy did in a task, as status shows it: the execs it refused and
// those that wait for a person.
import { z } from 'zod';

const ruleIndex = z
  .number()
  .int()
  .nullable()
  .describe("The rule's index in the operator's policy file, or null for the policy's default");
const execFields = {
  command: z.string().describe('The program (its file name) and its arguments, as the task ran them'),
  program: z.string().describe('The path of the program executed'),
  rule: ruleIndex,
  reason: z.string().describe("Why, in the operator's words"),
};

/** What the command policy did in a task, as status shows it. */
export const policySnapshotSchema = z.object({
  denied: z
    .array(z.object({ ...execFields, at: z.string().describe('ISO 8601 time it was refused') }))
    .describe('The last programs the policy refused (each failed with "Permission denied", exit 126 from a shell)'),
  denied_count: z.number().int().describe('How many execs the policy refused in all'),
  waiting: z
    .array(
      z.object({
        id: z.string().describe('What hive-bash approve and hive-bash deny take'),
        ...execFields,
        asked_at: z.string().describe('ISO 8601 time it began to wait'),
        expires_at: z.string().describe('ISO 8601 time it is refused if no one answers'),
      }),
    )
    .describe('Programs that wait, blocked, for a person to approve or deny them'),
});
