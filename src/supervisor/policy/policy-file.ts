// The operator's command policy, read and checked once at start (--policy FILE): each mistake is a
// ConfigError naming the rule's index and field, and the daemon does not start.
import { ConfigError } from '../../errors.js';
import type { Config } from '../config/config.js';
import { compileExecPolicy } from '../../process/exec-policy.js';
import {
  describeRuleWords,
  MAX_POLICY_BYTES,
  parseCommandPolicy,
  POLICY_FILE,
  type CommandPolicy,
} from '../../shared/command-policy.js';
import { readRegularFile } from '../../shared/regular-file.js';

/** The architectures whose shims have the policy's seccomp filter (native/src/exec-notify.c). */
const FILTERED_ARCHES = ['x64', 'arm64'];

export interface LoadedPolicy {
  file: string;
  policy: CommandPolicy;
  /** As the shims read it. */
  compiled: string;
  askTimeoutMs: number;
}

/**
 * The policy of --policy, or null without one; throws a ConfigError for a file that cannot be used,
 * and where tasks have no shim to enforce it (Node's spawn): a policy is never in force unenforced.
 */
export function loadPolicy(
  {
    policyFile: file,
    policyAskTimeoutSeconds: askTimeoutSeconds,
  }: Pick<Config, 'policyFile' | 'policyAskTimeoutSeconds'>,
  spawner: 'native' | 'node',
): LoadedPolicy | null {
  if (file === null) return null;
  const source = `--policy ${JSON.stringify(file)}`;
  if (spawner === 'node')
    throw new ConfigError(
      `${source} needs the native spawner, whose per-task shim holds each task's exec filter; this daemon starts tasks with Node's spawn (--containment node, or no native addon)`,
    );
  if (!FILTERED_ARCHES.includes(process.arch))
    throw new ConfigError(
      `${source}: the command policy is enforced on x86-64 and arm64 only; this is ${process.arch}`,
    );
  let text: string;
  try {
    text = readRegularFile(file, POLICY_FILE);
  } catch (error) {
    throw new ConfigError(`${source} ${(error as Error).message}`);
  }
  let policy: CommandPolicy;
  try {
    policy = parseCommandPolicy(text);
  } catch (error) {
    throw new ConfigError(`${source}: ${(error as Error).message}`);
  }
  const compiled = compileExecPolicy(policy);
  const compiledBytes = Buffer.byteLength(compiled);
  if (compiledBytes > MAX_POLICY_BYTES)
    throw new ConfigError(
      `${source}: its rules compile to ${compiledBytes} bytes for the tasks' shims, which read at most ${MAX_POLICY_BYTES}; it takes fewer or shorter rules`,
    );
  return { file, policy, compiled, askTimeoutMs: askTimeoutSeconds * 1000 };
}

/** The policy as /healthz, the start line and hive-bash policy show it, or null without one. */
export function describePolicy(loaded: LoadedPolicy | null) {
  if (loaded === null) return null;
  return {
    file: loaded.file,
    default: loaded.policy.default,
    ask_timeout_seconds: loaded.askTimeoutMs / 1000,
    rules: loaded.policy.rules.map((rule, index) => ({
      index,
      match: rule.words.map((alternatives) => (alternatives.length === 1 ? alternatives[0]! : alternatives)),
      decision: rule.decision,
      reason: rule.reason,
      text: describeRuleWords(rule),
    })),
  };
}
