// The operator's command policy (--policy FILE): its JSON shape, checked with zod, and the one
// matcher of an exec against its rules. The daemon compiles it for the shims, which match each exec
// of a task in C (native/src/exec-rules.c) by the same rules; hive-bash's `policy check` matches here.
import { basename } from 'node:path';
import { z } from 'zod';
import { echoValue } from './echo.js';
import { findDuplicateKey } from './json-duplicates.js';
import type { RegularFileBound } from './regular-file.js';

/** The largest policy file, and the largest compiled policy a task's shim reads (native/src/exec-rules.c). */
export const MAX_POLICY_BYTES = 16 * 1024 * 1024;
/** How the policy file is read (shared/regular-file.ts). */
export const POLICY_FILE: RegularFileBound = {
  maxBytes: MAX_POLICY_BYTES,
  accepts: `it takes a regular file of JSON of at most 16 MiB (${MAX_POLICY_BYTES} bytes)`,
};

export const DECISIONS = ['allow', 'ask', 'deny'] as const;
export type Decision = (typeof DECISIONS)[number];
/** How strict each decision is: the strictest of the matching rules wins. */
const STRICTNESS: Record<Decision, number> = { allow: 0, ask: 1, deny: 2 };

/** The most words a rule may match (the shim reads at most 64 words of an exec's argv). */
export const MAX_RULE_WORDS = 64;
export const MAX_RULES = 10_000;
/** A reason goes back to the shim on one control line with the rest of a refusal. */
export const MAX_REASON_CHARS = 200;

const DECISION_ACCEPTS = '"allow", "ask" or "deny"';
const noNul = (text: string) => !text.includes('\0');
const word = z.string().refine(noNul);
const program = z
  .string()
  .refine((name) => noNul(name) && name !== '' && (name.startsWith('/') || !name.includes('/')));
const programWord = z.union([program, z.array(program).min(1)]);
const argumentWord = z.union([word, z.array(word).min(1)]);
const ruleSchema = z.strictObject({
  match: z
    .array(z.unknown())
    .min(1)
    .max(MAX_RULE_WORDS)
    .superRefine((words, context) => {
      words.forEach((item, index) => {
        if (!(index === 0 ? programWord : argumentWord).safeParse(item).success)
          context.addIssue({ code: 'custom', path: [index], message: index === 0 ? PROGRAM_ACCEPTS : WORD_ACCEPTS });
      });
    }),
  decision: z.enum(DECISIONS),
  reason: z
    .string()
    .min(1)
    .max(MAX_REASON_CHARS)
    .refine((text) => !/[\r\n\0]/.test(text)),
});
const policySchema = z.strictObject({
  default: z.enum(DECISIONS).optional(),
  rules: z.array(ruleSchema).max(MAX_RULES),
});

const PROGRAM_ACCEPTS = 'a program: a file name (git) or an absolute path (/usr/bin/git), or an array of them';
const WORD_ACCEPTS = 'an argument (a string without NUL) or an array of alternative arguments';
/** What each field takes, after "must be" in a refusal. */
const ACCEPTS: Record<string, string> = {
  '': 'an object {"default": "allow" | "ask" | "deny", "rules": [...]}',
  default: `${DECISION_ACCEPTS} (what no rule matches gets; default "allow")`,
  rules: `an array of at most ${MAX_RULES} rules {"match": [PROGRAM, ARG...], "decision": ..., "reason": ...}`,
  rule: 'an object {"match": [PROGRAM, ARG...], "decision": "allow" | "ask" | "deny", "reason": "..."}',
  match: `an array of 1 to ${MAX_RULE_WORDS} words: the program, then the first arguments it matches`,
  decision: DECISION_ACCEPTS,
  reason: `one line of 1 to ${MAX_REASON_CHARS} characters, shown to the agent`,
};

/** One rule: the alternatives of each word (the first the program's), its decision and reason. */
export interface PolicyRule {
  words: string[][];
  decision: Decision;
  reason: string;
}

export interface CommandPolicy {
  default: Decision;
  rules: PolicyRule[];
}

/** An exec as the rules see it: the path executed, the file it resolves to, its argv. */
export interface ExecCall {
  path: string;
  real: string | null;
  argv: readonly string[];
}

/** What the policy says of an exec: the decision, the rule that decided (null: the default), every rule that matched. */
export interface Verdict {
  decision: Decision;
  rule: number | null;
  matched: number[];
}

/** The reason told for what no rule matches, by the default's decision. */
export const DEFAULT_REASONS: Record<Decision, string> = {
  allow: 'no rule matches it',
  ask: 'no rule matches it, and the policy asks before anything its rules do not allow',
  deny: 'no rule allows it, and the policy allows only what its rules allow',
};

/** Checks the policy file's JSON `text`; throws an Error naming the rule's index and field at fault. */
export function parseCommandPolicy(text: string): CommandPolicy {
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`is not JSON: ${(error as Error).message}`);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null)
    throw new Error(
      `${duplicate.path} is given twice (again at line ${duplicate.line}, column ${duplicate.column}): each field is given once`,
    );
  const result = policySchema.safeParse(json);
  if (!result.success) throw new Error(describeIssue(result.error.issues[0]!, json));
  return {
    default: result.data.default ?? 'allow',
    rules: result.data.rules.map((rule) => ({
      words: rule.match.map((item) => (Array.isArray(item) ? (item as string[]) : [item as string])),
      decision: rule.decision,
      reason: rule.reason,
    })),
  };
}

/** `rules[2].decision must be "allow", "ask" or "deny"; got "block" (string)`. */
function describeIssue(issue: z.core.$ZodIssue, json: unknown): string {
  const path = issue.path;
  const where = path
    .map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`))
    .join('');
  if (issue.code === 'unrecognized_keys')
    return `${where === '' ? 'the policy' : where} has unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((key) => JSON.stringify(key)).join(', ')}; it takes ${path.length === 0 ? '"default" and "rules"' : '"match", "decision" and "reason"'}`;
  let value: unknown = json;
  for (const part of path)
    value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[part] : undefined;
  const last = path[path.length - 1];
  const field = typeof last === 'string' ? last : path.length === 2 ? 'rule' : path.length === 0 ? '' : issue.message;
  const accepts = typeof last === 'number' && path.length === 4 ? issue.message : (ACCEPTS[field] ?? issue.message);
  const shown = where === '' ? 'the policy' : where;
  return value === undefined
    ? `${shown} is required: ${accepts}`
    : `${shown} must be ${accepts}; got ${echoValue(value)}`;
}

/** The policy's verdict on `exec`: the strictest decision of the rules that match it (the first rule of it), else the default. */
export function matchExec(policy: CommandPolicy, exec: ExecCall): Verdict {
  const matched = policy.rules.flatMap((rule, index) => (ruleMatches(rule, exec) ? [index] : []));
  let rule: number | null = null;
  for (const index of matched)
    if (rule === null || STRICTNESS[policy.rules[index]!.decision] > STRICTNESS[policy.rules[rule]!.decision])
      rule = index;
  return { decision: rule === null ? policy.default : policy.rules[rule]!.decision, rule, matched };
}

function ruleMatches(rule: PolicyRule, exec: ExecCall): boolean {
  if (rule.words.length > 1 && exec.argv.length < rule.words.length) return false;
  return rule.words.every((alternatives, index) =>
    index === 0 ? alternatives.some((name) => programMatches(name, exec)) : alternatives.includes(exec.argv[index]!),
  );
}

/** A name matches the file name of the path executed or of the file it resolves to; an absolute path either path. */
function programMatches(name: string, exec: ExecCall): boolean {
  if (name.startsWith('/')) return name === exec.path || name === exec.real;
  return name === basename(exec.path) || (exec.real !== null && name === basename(exec.real));
}

/** A rule's words as a person reads them: `git (push|fetch) --force`. */
export function describeRuleWords(rule: PolicyRule): string {
  return rule.words
    .map((alternatives) => (alternatives.length === 1 ? alternatives[0]! : `(${alternatives.join('|')})`))
    .join(' ');
}

/**
 * The policy with each absolute program path's resolved file added as an alternative, so that a
 * rule for /usr/bin/python3 (a symlink to python3.11) matches an exec of either: `realpath` gives
 * the resolved path, or null where it cannot be resolved.
 */
export function resolvePrograms(policy: CommandPolicy, realpath: (path: string) => string | null): CommandPolicy {
  return {
    ...policy,
    rules: policy.rules.map((rule) => {
      const programs = rule.words[0]!.flatMap((name) => {
        const real = name.startsWith('/') ? realpath(name) : null;
        return real === null || real === name ? [name] : [name, real];
      });
      return { ...rule, words: [[...new Set(programs)], ...rule.words.slice(1)] };
    }),
  };
}
