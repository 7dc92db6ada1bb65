// The flags of the operator's command policy: the file, and how long an exec that asks waits for a person.
import { option } from './config-option.js';
import { integer, text } from './option-schemas.js';

export const POLICY_OPTIONS = {
  policyFile: option(
    {
      flag: 'policy',
      accepts:
        'a path to a JSON file of rules, like {"default":"allow","rules":[{"match":["git","push","--force"],"decision":"deny","reason":"no force pushes"}]}',
      help: 'the command policy: every exec of every process of a task is allowed, refused or asked about by its rules (docs/sandbox-and-policy.md)',
    },
    text,
    null,
  ),
  policyAskTimeoutSeconds: option(
    {
      flag: 'policy-ask-timeout',
      accepts: 'an integer of seconds from 1 to 86400',
      help: 'how long an exec a rule asks about waits for a person; then it is refused',
    },
    integer(1, 86_400),
    600,
  ),
};
