// The flags of the operator's command policy: the file, and how long an exec that asks waits for a person.
import type { OptionSpec } from '../config-types.js';
import { integer, text } from '../option-schemas.js';

export const POLICY_OPTIONS: OptionSpec[] = [
  {
    flag: 'policy',
    key: 'policyFile',
    schema: text,
    accepts:
      'a path to a JSON file of rules, like {"default":"allow","rules":[{"match":["git","push","--force"],"decision":"deny","reason":"no force pushes"}]}',
    default: null,
    help: 'the command policy: every exec of every process of a task is allowed, refused or asked about by its rules (docs/sandbox-and-policy.md)',
  },
  {
    flag: 'policy-ask-timeout',
    key: 'policyAskTimeoutSeconds',
    schema: integer(1, 86_400),
    accepts: 'an integer of seconds from 1 to 86400',
    default: 600,
    help: 'how long an exec a rule asks about waits for a person; then it is refused',
  },
];
