/* The operator's command policy as the shim holds it: rules that match a program and the first
 * words of its arguments, each with a decision; the strictest matching decision wins, and the
 * default decides what no rule matches. The daemon checks the policy file and compiles it
 * (src/process/exec-policy.ts) into the form read here: NUL-terminated fields,
 *
 *   "hive-exec-policy 2"  DEFAULT  DEFAULT_REASON  RULE_COUNT
 *   then per rule:  DECISION  LABEL  REASON  WORD_COUNT
 *                   then per word:  ALTERNATIVE_COUNT  ALTERNATIVE...
 *   then the ruled programs' identities (exec-identity.h)
 *
 * a DECISION is "allow", "ask" or "deny"; the first word is the program: an alternative that
 * starts with '/' matches the executed path (or the file it resolves to, or a name of the ruled
 * program the file is), any other matches those paths' file names. The other words match argv[1],
 * argv[2]... exactly. One exec may run several programs (exec-views.h): the rules see each. */
#ifndef HIVE_EXEC_RULES_H
#define HIVE_EXEC_RULES_H

#include <stddef.h>

enum exec_decision { EXEC_ALLOW = 0, EXEC_ASK = 1, EXEC_DENY = 2 };

struct exec_identity;

/* An exec as the rules see it: the path executed (absolute), the file it resolves to (absolute,
 * or NULL where it cannot be resolved), the ruled program that file is (or NULL), and the first
 * `argc` words of its argv. */
struct exec_call {
  const char *path;
  const char *real;
  const struct exec_identity *identity;
  char *const *argv;
  int argc;
};

/* What the policy says of an exec: its decision, and the rule that decided (-1: the default). */
struct exec_verdict {
  enum exec_decision decision;
  int rule;
  const char *label;
  const char *reason;
};

/* Reads the compiled policy from `fd` (from its start, whatever its offset): 0, or -errno
 * (-EINVAL for a malformed one) with `*call` naming what failed. */
int exec_rules_load(int fd, const char **call);

/* How many words of argv (argv[0] included) the longest rule looks at. */
int exec_rules_words(void);

/* The policy's verdict on an exec that runs the programs `calls` (`count` of them): the strictest
 * decision of the rules that match any of them (the first such rule), else the default. */
struct exec_verdict exec_rules_match(const struct exec_call *calls, int count);

/* "allow", "ask" or "deny". */
const char *exec_decision_name(enum exec_decision decision);

#endif
