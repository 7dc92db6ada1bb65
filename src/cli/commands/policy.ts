// policy: the daemon's command policy; policy check: what it (or a policy file) decides of a command,
// as `codex execpolicy check` tells it: the decision, the rule that decided, every rule that matched.
import { delimiter, join, resolve } from 'node:path';
import { accessSync, constants, realpathSync } from 'node:fs';
import {
  DEFAULT_REASONS,
  describeRuleWords,
  matchExec,
  parseCommandPolicy,
  POLICY_FILE,
  resolvePrograms,
  type CommandPolicy,
  type Decision,
} from '../../shared/command-policy.js';
import { escapeControls } from '../../shared/control-escape.js';
import { readRegularFile } from '../../shared/regular-file.js';
import { CliError, UsageError } from '../cli-error.js';
import { writeJson, type Command, type CommandContext } from '../command.js';
import { renderTable, type Column } from '../format.js';

/** The exit code of policy check for each decision. */
const EXIT_OF: Record<Decision, number> = { allow: 0, ask: 4, deny: 5 };

interface ShownRule {
  index: number;
  match: Array<string | string[]>;
  decision: Decision;
  reason: string;
  text: string;
}

interface ShownPolicy {
  file: string;
  default: Decision;
  ask_timeout_seconds: number;
  rules: ShownRule[];
}

const COLUMNS: Column[] = [
  { header: 'RULE', align: 'right' },
  { header: 'DECISION' },
  { header: 'MATCH' },
  { header: 'REASON' },
];

export const policyCommand: Command = {
  name: 'policy',
  summary: "the daemon's command policy; policy check -- COMMAND…: what it decides of a command",
  usage: 'hive-bash policy [check [--file FILE] -- PROGRAM [ARG…]]',
  help: [
    "policy: the rules of the daemon's --policy, in order, and its default.",
    'policy check -- git push --force origin main: the decision for that exec, the rule that decides',
    '  (the strictest that matches, else the default) and every rule that matches. PROGRAM is found',
    '  on PATH as a shell finds it, and matched as the daemon matches the file a task executes.',
    "--file FILE  check against a policy file instead of the daemon's (nothing is asked of a daemon)",
    'policy check exits 0 for allow, 4 for ask, 5 for deny.',
  ],
  options: { file: { type: 'string' } },
  async run(context, values, positionals) {
    const file = values.file as string | undefined;
    if (positionals.length === 0) {
      if (file !== undefined)
        throw new UsageError('--file is taken by policy check (hive-bash policy check --file FILE -- COMMAND…)');
      return showPolicy(context, await daemonPolicy(context));
    }
    if (positionals[0] !== 'check')
      throw new UsageError(
        `policy takes "check" or nothing; got ${JSON.stringify(positionals[0])} (hive-bash policy --help)`,
      );
    if (positionals.length < 2)
      throw new UsageError('policy check needs the command to check after --, e.g. hive-bash policy check -- git push');
    const shown = file === undefined ? await daemonPolicy(context) : null;
    return checkCommand(context, file === undefined ? policyOf(shown!) : readPolicyFile(file), positionals.slice(1));
  },
};

async function daemonPolicy(context: CommandContext): Promise<ShownPolicy> {
  const { policy } = await context.client.getJson<{ policy: ShownPolicy | null }>('/policy');
  if (policy === null)
    throw new CliError(
      'the daemon has no command policy (it was started without --policy); policy check --file FILE checks a file',
    );
  return policy;
}

function showPolicy(context: CommandContext, policy: ShownPolicy): number {
  if (context.json) {
    writeJson(context, { policy });
    return 0;
  }
  const rows = policy.rules.map((rule) => [String(rule.index), rule.decision, rule.text, rule.reason]);
  const table = rows.length === 0 ? 'no rules' : renderTable(COLUMNS, rows, context.width);
  context.write(
    `${escapeControls(policy.file)}: default ${policy.default}; asks wait ${policy.ask_timeout_seconds} s\n${table}\n`,
  );
  return 0;
}

function readPolicyFile(file: string): CommandPolicy {
  let text: string;
  try {
    text = readRegularFile(file, POLICY_FILE);
  } catch (error) {
    throw new CliError(`--file ${JSON.stringify(file)} ${(error as Error).message}`);
  }
  try {
    return parseCommandPolicy(text);
  } catch (error) {
    throw new CliError(`--file ${JSON.stringify(file)}: ${(error as Error).message}`);
  }
}

function policyOf(shown: ShownPolicy): CommandPolicy {
  return {
    default: shown.default,
    rules: shown.rules.map((rule) => ({
      words: rule.match.map((word) => (Array.isArray(word) ? word : [word])),
      decision: rule.decision,
      reason: rule.reason,
    })),
  };
}

function checkCommand(context: CommandContext, policy: CommandPolicy, argv: string[]): number {
  const path = locateProgram(argv[0]!);
  const real = realFile(path);
  const verdict = matchExec(resolvePrograms(policy, realFile), { path, real, argv });
  const show = (index: number) => {
    const rule = policy.rules[index]!;
    return { index, text: describeRuleWords(rule), decision: rule.decision, reason: rule.reason };
  };
  const rule = verdict.rule === null ? null : show(verdict.rule);
  const reason = rule?.reason ?? DEFAULT_REASONS[policy.default];
  if (context.json)
    writeJson(context, {
      decision: verdict.decision,
      rule,
      reason,
      program: { path, real },
      matched_rules: verdict.matched.map(show),
    });
  else {
    const by = rule === null ? "the policy's default" : `rule ${rule.index} (${rule.text})`;
    const lines = [
      `${verdict.decision}: ${by}: ${reason}`,
      `program: ${path}${real !== null && real !== path ? ` (${real})` : ''}`,
    ];
    if (verdict.matched.length > 1)
      lines.push(
        `matched: ${verdict.matched.map((index) => `rule ${index} ${policy.rules[index]!.decision}`).join(', ')}`,
      );
    context.write(`${lines.map((line) => escapeControls(line)).join('\n')}\n`);
  }
  return EXIT_OF[verdict.decision];
}

/** Where a shell finds `program`: a path as given (from the working directory), else the first executable on PATH; else the word. */
function locateProgram(program: string): string {
  if (program.includes('/')) return resolve(program);
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(resolve(dir || '.'), program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return program;
}

function realFile(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
