// The environment a task starts with: the daemon's (but its own settings), then defaults that keep
// a task from waiting on a human nobody will be, then the run's own env (which can override any of
// them), then the daemon's markers.
import { RUN_MARKER_NAME } from '../../process/process-table.js';

/**
 * Set for every task. Output goes to files and nobody is there to press q: a pager would print
 * the first screen and wait (git log, man, systemctl on a terminal).
 */
export const PAGER_DEFAULTS: Readonly<Record<string, string>> = {
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  MANPAGER: 'cat',
  SYSTEMD_PAGER: 'cat',
};

/**
 * Set for tasks that are not interactive: nobody can answer a prompt, so a program fails at once
 * instead of waiting for its timeout. git asks for no credentials and opens no editor (commit
 * without -m fails, merge keeps its message), and Debian's package tools take their defaults.
 */
export const PROMPT_DEFAULTS: Readonly<Record<string, string>> = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_EDITOR: 'true',
  DEBIAN_FRONTEND: 'noninteractive',
};

/** The terminal type a pty task declares (its programs look it up for colours and cursor moves). */
export const PTY_TERM = 'xterm-256color';

/** The daemon's environment as tasks inherit it: all but its own HIVE_BASH_* settings. */
export function inheritedEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('HIVE_BASH_')) env[name] = value;
  }
  return env;
}

export interface TaskEnvironmentRequest {
  id: string;
  runKey: string;
  env: Record<string, string>;
  pty: boolean;
  interactive: boolean;
}

export function taskEnvironment(base: Record<string, string>, task: TaskEnvironmentRequest): Record<string, string> {
  return { ...defaultsOver(base, task), ...task.env, HIVE_BASH_TASK_ID: task.id, [RUN_MARKER_NAME]: task.runKey };
}

/** The daemon's environment under the defaults, made once per base and kind of task (the same names in the same order). */
const DEFAULTED = new WeakMap<Record<string, string>, Map<string, Readonly<Record<string, string>>>>();

function defaultsOver(base: Record<string, string>, task: { pty: boolean; interactive: boolean }) {
  let kinds = DEFAULTED.get(base);
  if (kinds === undefined) DEFAULTED.set(base, (kinds = new Map<string, Readonly<Record<string, string>>>()));
  const kind = `${task.pty} ${task.interactive}`;
  let env = kinds.get(kind);
  if (env === undefined) {
    env = Object.freeze({
      ...base,
      ...PAGER_DEFAULTS,
      ...(task.interactive ? {} : PROMPT_DEFAULTS),
      ...(task.pty ? { TERM: PTY_TERM } : {}),
    });
    kinds.set(kind, env);
  }
  return env;
}
