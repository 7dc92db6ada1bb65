// The daemon's options, keyed by their Config field: each one's flag, its HIVE_BASH_* variable, what
// it accepts (for the error that echoes a wrong value), its line of --help, the zod schema its text
// must pass and its default. The one source of Config: config.ts reads it as a z.object.
import { z } from 'zod';
import { option } from './config-option.js';
import { CLIENT_LIMIT_OPTIONS } from './client-limit-options.js';
import { POLICY_OPTIONS } from './policy-options.js';
import { cpus, integer, jsonOf, positiveNumber, text } from './option-schemas.js';
import { sandboxSchema } from '../tasks/task-sandbox.js';
import { TASKS_MAY_CALL } from '../callers/task-callers.js';
import { DECLINE_DISCOVER } from '../mcp/channel-clients.js';
import { MAX_CPU_LIMIT, MAX_MEMORY_LIMIT_MB, MAX_PROCESSES_LIMIT, MIN_CPU_LIMIT } from '../../process/limits.js';

/** What pending runs hold at most by default: 64 runs at the most stdin one run may give, or 256 at the longest command. */
const DEFAULT_MAX_PENDING_BYTES = 64 * 1024 * 1024;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A task limit's flags: the text they take, what it reads as, and what is limited (for --help). */
interface Limit<S> {
  schema: S;
  accepts: string;
  what: string;
}
const MEMORY = {
  schema: integer(1, MAX_MEMORY_LIMIT_MB),
  accepts: `an integer of MiB from 1 to ${MAX_MEMORY_LIMIT_MB}`,
  what: 'memory',
};
const PROCESSES = {
  schema: integer(1, MAX_PROCESSES_LIMIT),
  accepts: `an integer from 1 to ${MAX_PROCESSES_LIMIT}`,
  what: 'processes and threads',
};
const CPUS = { schema: cpus, accepts: `a number of CPUs from ${MIN_CPU_LIMIT} to ${MAX_CPU_LIMIT}`, what: 'CPUs' };

export const OPTIONS = {
  host: option(
    {
      flag: 'host',
      accepts: 'a host name or IP address',
      help: 'address to listen on; anything but loopback needs --auth-token-file',
    },
    text,
    '127.0.0.1',
  ),
  port: option(
    { flag: 'port', accepts: 'an integer from 0 to 65535', help: 'TCP port; 0 picks a free one' },
    integer(0, 65535),
    7433,
  ),
  stateDir: option(
    { flag: 'state-dir', accepts: 'a directory path', help: 'where the task registry and output files live' },
    text,
    './.hive-bash',
  ),
  agentSocket: option(
    {
      flag: 'agent-socket',
      env: 'HIVE_AGENT_SOCKET',
      accepts: 'a unix socket path',
      help: "the harness's todo socket",
    },
    text,
    null,
  ),
  maxRunning: option(
    {
      flag: 'max-running',
      accepts: 'an integer from 1 to 100000',
      help: 'tasks running at once; more wait as pending',
    },
    integer(1, 100_000),
    64,
  ),
  maxPending: option(
    {
      flag: 'max-pending',
      accepts: 'an integer from 0 to 10000000',
      help: 'pending tasks beyond which run is refused',
    },
    integer(0, 10_000_000),
    10_000,
  ),
  maxPendingBytes: option(
    {
      flag: 'max-pending-bytes',
      accepts: 'an integer of bytes from 0 to 1099511627776',
      help: 'bytes of command, stdin, cwd, name, env and sandbox folders the pending tasks hold in all, beyond which run is refused',
    },
    integer(0, 1024 ** 4),
    DEFAULT_MAX_PENDING_BYTES,
  ),
  defaultTimeoutSeconds: option(
    { flag: 'default-timeout', accepts: 'a positive number of seconds', help: 'time limit for tasks that set none' },
    positiveNumber,
    null,
  ),
  killGraceMs: option(
    {
      flag: 'kill-grace-ms',
      accepts: 'an integer from 0 to 3600000',
      help: 'from the first signal of a kill or timeout to SIGKILL',
    },
    integer(0, 3_600_000),
    5000,
  ),
  maxOutputBytes: option(
    {
      flag: 'max-output-bytes',
      accepts: 'a non-negative integer (0: no cap)',
      help: 'bytes kept per stream of a task; 0: no cap',
    },
    integer(0, Number.MAX_SAFE_INTEGER),
    64 * 1024 * 1024,
  ),
  retentionDays: option(
    { flag: 'retention-days', accepts: 'a positive number of days', help: 'finished tasks older than this are pruned' },
    positiveNumber,
    7,
  ),
  retentionCount: option(
    { flag: 'retention-count', accepts: 'an integer from 1 to 10000000', help: 'finished tasks kept at most' },
    integer(1, 10_000_000),
    1000,
  ),
  workerIdleSeconds: option(
    {
      flag: 'worker-idle-seconds',
      accepts: 'an integer from 1 to 86400',
      help: 'the worker threads (and their spawners) stop after this long with no task and no MCP request',
    },
    integer(1, 86_400),
    60,
  ),
  authTokenFile: option(
    {
      flag: 'auth-token-file',
      accepts: 'a path to a file holding the token',
      help: 'require Authorization: Bearer TOKEN',
    },
    text,
    null,
  ),
  sessionIdleSeconds: option(
    {
      flag: 'session-idle-seconds',
      accepts: 'an integer from 1 to 86400',
      help: 'MCP sessions idle this long are closed',
    },
    integer(1, 86_400),
    1800,
  ),
  declineDiscover: option(
    {
      flag: 'decline-discover',
      accepts: 'one of never, claude-code, always',
      help: 'answer server/discover with "method not found" so that a client falls back to a 2025-11-25 session, whose GET stream carries channel events: never, to Claude Code (clientInfo claude-code, or a client declaring experimental claude/channel), or always',
    },
    z.enum(DECLINE_DISCOVER),
    'never',
  ),
  ...CLIENT_LIMIT_OPTIONS,
  containment: option(
    {
      flag: 'containment',
      accepts: 'one of auto, cgroup, process-group, node',
      help: 'how tasks are contained: a cgroup each where possible (auto), or forced',
    },
    z.enum(['auto', 'cgroup', 'process-group', 'node']),
    'auto',
  ),
  taskNamespace: option(
    {
      flag: 'task-namespace',
      accepts: 'one of auto, off',
      help: "tasks in a PID and mount namespace of their own where the daemon may (auto: they cannot see or signal the daemon, the state dir is read-only to them, the token hidden); off: they share the daemon's",
    },
    z.enum(['auto', 'off']),
    'auto',
  ),
  defaultSandbox: option(
    {
      flag: 'default-sandbox',
      accepts: 'a JSON object like run\'s sandbox field, e.g. {"network":false} or {"write":["/work"],"network":false}',
      help: "the sandbox of every run that gives none (write left out: the task's cwd and the temporary directory)",
    },
    jsonOf(sandboxSchema),
    null,
  ),
  sandboxFloor: option(
    {
      flag: 'sandbox-floor',
      accepts: 'a JSON object like run\'s sandbox field, e.g. {"write":["/work","/tmp"],"network":false}',
      help: 'the widest sandbox any run may have, applied to runs that give none and have no default (a member left out allows all of it)',
    },
    jsonOf(sandboxSchema),
    null,
  ),
  ...POLICY_OPTIONS,
  tasksMayCall: option(
    {
      flag: 'tasks-may-call',
      accepts: `one of ${TASKS_MAY_CALL.join(', ')}`,
      help: "what a call from one of the daemon's own tasks may do: same-sandbox, anything, and a run at most as wide as the caller's sandbox; off, nothing (403)",
    },
    z.enum(TASKS_MAY_CALL),
    'same-sandbox',
  ),
  cgroupRoot: option(
    {
      flag: 'cgroup-root',
      accepts: 'a cgroup v2 folder the daemon may create cgroups in',
      help: 'where task cgroups go; default: the delegated cgroup, else a writable cgroup2 mount',
    },
    text,
    null,
  ),
  taskMemoryLimitMb: limitOption('task-memory-limit-mb', MEMORY),
  taskMemoryLimitMbCeiling: ceilingOption('task-memory-limit-mb', MEMORY),
  taskMaxProcesses: limitOption('task-max-processes', PROCESSES),
  taskMaxProcessesCeiling: ceilingOption('task-max-processes', PROCESSES),
  taskCpuLimit: limitOption('task-cpu-limit', CPUS),
  taskCpuLimitCeiling: ceilingOption('task-cpu-limit', CPUS),
  logLevel: option(
    {
      flag: 'log-level',
      accepts: `one of ${LOG_LEVELS.join(', ')}`,
      help: 'the least severe log lines written to stderr',
    },
    z.enum(LOG_LEVELS),
    'info',
  ),
};

/** Each task's limit of `limit.what` unless its run sets its own; none by default. */
function limitOption<S extends z.ZodType<unknown, string>>(flag: string, limit: Limit<S>) {
  const help = `each task's ${limit.what} limit unless its run sets its own`;
  return option({ flag, accepts: limit.accepts, help }, limit.schema, null);
}

/** The most of `limit.what` a run may ask for; no ceiling by default. */
function ceilingOption<S extends z.ZodType<unknown, string>>(limitFlag: string, limit: Limit<S>) {
  const help = `the most ${limit.what} a run may ask for (and the limit of one that asks for none, without a default)`;
  return option({ flag: `${limitFlag}-ceiling`, accepts: limit.accepts, help }, limit.schema, null);
}
