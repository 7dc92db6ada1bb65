// The command policy as a task's shim reads it (native/src/exec-rules.h): compiled once from the
// checked policy, then handed to each shim as an fd (-p). Each worker thread keeps one memfd of it.
import { realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { DEFAULT_REASONS, describeRuleWords, resolvePrograms, type CommandPolicy } from '../shared/command-policy.js';
import { nativeAddon } from './native.js';
import { APPLET_BINARIES, findProgramIdentities, identityFields } from './program-identity.js';

const MAGIC = 'hive-exec-policy 2';

/**
 * `policy` in the shim's form: NUL-terminated fields; absolute program paths with their resolved
 * files; then the identities of the programs it names (program-identity.ts).
 */
export function compileExecPolicy(policy: CommandPolicy): string {
  const resolved = resolvePrograms(policy, realFile);
  const fields = [MAGIC, policy.default, DEFAULT_REASONS[policy.default], String(policy.rules.length)];
  resolved.rules.forEach((rule, index) => {
    fields.push(rule.decision, describeRuleWords(policy.rules[index]!), rule.reason, String(rule.words.length));
    for (const alternatives of rule.words) fields.push(String(alternatives.length), ...alternatives);
  });
  fields.push(...identityFields(findProgramIdentities(policy)));
  return fields.map((field) => `${field}\0`).join('');
}

/**
 * The file `path` resolves to, or null where it cannot be resolved (it is not there yet) or is a
 * multi-call binary: /bin/wget as a link to busybox must not make every applet wget.
 */
function realFile(path: string): string | null {
  try {
    const real = realpathSync(path);
    return APPLET_BINARIES.has(basename(real)) ? null : real;
  } catch {
    return null;
  }
}

/** This thread's memfd of the compiled policy, made on first use (shims read it from its start). */
let held: { compiled: string; fd: number } | null = null;

/** An fd of `compiled` for a shim's -p: the same one for every task of this thread. */
export function policyFd(compiled: string): number {
  if (held?.compiled === compiled) return held.fd;
  if (held !== null) nativeAddon().close(held.fd);
  held = { compiled, fd: nativeAddon().textFd(compiled) };
  return held.fd;
}
