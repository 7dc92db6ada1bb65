// A command longer than one argv string may be (MAX_ARG_STRLEN) travels in environment parts that bash joins.

/** The kernel refuses one argv string longer than this (MAX_ARG_STRLEN); longer commands travel in the environment. */
export const MAX_ARGUMENT_BYTES = 128 * 1024 - 1;

/** UTF-16 units per part: at most 3 bytes each in UTF-8, so a part stays under MAX_ARGUMENT_BYTES. */
const LONG_COMMAND_PART_UNITS = 40_000;

/**
 * One environment string is capped like one argument, so a long command travels in parts that
 * bash joins, unsets and evaluates: the same as `bash -c COMMAND` but for $0.
 */
export function splitLongCommand(command: string): { script: string; env: Record<string, string> } {
  const env: Record<string, string> = {};
  const names: string[] = [];
  for (let start = 0; start < command.length; ) {
    let end = Math.min(start + LONG_COMMAND_PART_UNITS, command.length);
    const last = command.charCodeAt(end - 1);
    if (end < command.length && last >= 0xd800 && last <= 0xdbff) end -= 1; // keep surrogate pairs whole
    const name = `HIVE_BASH_COMMAND_PART_${names.length}`;
    env[name] = command.slice(start, end);
    names.push(name);
    start = end;
  }
  const joined = names.map((name) => `$${name}`).join('');
  return { script: `__hive_bash_command="${joined}"; unset ${names.join(' ')}; eval "$__hive_bash_command"`, env };
}
