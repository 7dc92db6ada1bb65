// The daemon's flags: each one's name, its HIVE_BASH_* variable, the zod schema its text must pass, what it
// accepts (for the error that echoes a wrong value), its default and its line of --help.
import { z } from 'zod';
import type { Config, OptionSpec } from './config-types.js';
import { CLIENT_LIMIT_OPTIONS } from './client-limit-options.js';
import { POLICY_OPTIONS } from './policy/policy-options.js';
import { cpus, integer, jsonOf, positiveNumber, text } from './option-schemas.js';
import { sandboxSchema } from './tasks/task-sandbox.js';
import { TASKS_MAY_CALL } from './callers/task-callers.js';
import { MAX_CPU_LIMIT, MAX_MEMORY_LIMIT_MB, MAX_PROCESSES_LIMIT, MIN_CPU_LIMIT } from '../process/limits.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const OPTIONS: OptionSpec[] = [
  {
    flag: 'host',
    key: 'host',
    schema: text,
    accepts: 'a host name or IP address',
    default: '127.0.0.1',
    help: 'address to listen on; anything but loopback needs --auth-token-file',
  },
  {
    flag: 'port',
    key: 'port',
    schema: integer(0, 65535),
    accepts: 'an integer from 0 to 65535',
    default: 7433,
    help: 'TCP port; 0 picks a free one',
  },
  {
    flag: 'state-dir',
    key: 'stateDir',
    schema: text,
    accepts: 'a directory path',
    default: './.hive-bash',
    help: 'where the task registry and output files live',
  },
  {
    flag: 'agent-socket',
    key: 'agentSocket',
    env: 'HIVE_AGENT_SOCKET',
    schema: text,
    accepts: 'a unix socket path',
    default: null,
    help: "the harness's todo socket",
  },
  {
    flag: 'max-running',
    key: 'maxRunning',
    schema: integer(1, 100_000),
    accepts: 'an integer from 1 to 100000',
    default: 64,
    help: 'tasks running at once; more wait as pending',
  },
  {
    flag: 'max-pending',
    key: 'maxPending',
    schema: integer(0, 10_000_000),
    accepts: 'an integer from 0 to 10000000',
    default: 10_000,
    help: 'pending tasks beyond which run is refused',
  },
  {
    flag: 'default-timeout',
    key: 'defaultTimeoutSeconds',
    schema: positiveNumber,
    accepts: 'a positive number of seconds',
    default: null,
    help: 'time limit for tasks that set none',
  },
  {
    flag: 'kill-grace-ms',
    key: 'killGraceMs',
    schema: integer(0, 3_600_000),
    accepts: 'an integer from 0 to 3600000',
    default: 5000,
    help: 'from the first signal of a kill or timeout to SIGKILL',
  },
  {
    flag: 'max-output-bytes',
    key: 'maxOutputBytes',
    schema: integer(0, Number.MAX_SAFE_INTEGER),
    accepts: 'a non-negative integer (0: no cap)',
    default: 64 * 1024 * 1024,
    help: 'bytes kept per stream of a task; 0: no cap',
  },
  {
    flag: 'retention-days',
    key: 'retentionDays',
    schema: positiveNumber,
    accepts: 'a positive number of days',
    default: 7,
    help: 'finished tasks older than this are pruned',
  },
  {
    flag: 'retention-count',
    key: 'retentionCount',
    schema: integer(1, 10_000_000),
    accepts: 'an integer from 1 to 10000000',
    default: 1000,
    help: 'finished tasks kept at most',
  },
  {
    flag: 'worker-idle-seconds',
    key: 'workerIdleSeconds',
    schema: integer(1, 86_400),
    accepts: 'an integer from 1 to 86400',
    default: 60,
    help: 'the worker threads (and their spawners) stop after this long with no task and no MCP request',
  },
  {
    flag: 'auth-token-file',
    key: 'authTokenFile',
    schema: text,
    accepts: 'a path to a file holding the token',
    default: null,
    help: 'require Authorization: Bearer TOKEN',
  },
  {
    flag: 'session-idle-seconds',
    key: 'sessionIdleSeconds',
    schema: integer(1, 86_400),
    accepts: 'an integer from 1 to 86400',
    default: 1800,
    help: 'MCP sessions idle this long are closed',
  },
  ...CLIENT_LIMIT_OPTIONS,
  {
    flag: 'containment',
    key: 'containment',
    schema: z.enum(['auto', 'cgroup', 'process-group', 'node']),
    accepts: 'one of auto, cgroup, process-group, node',
    default: 'auto',
    help: 'how tasks are contained: a cgroup each where possible (auto), or forced',
  },
  {
    flag: 'task-namespace',
    key: 'taskNamespace',
    schema: z.enum(['auto', 'off']),
    accepts: 'one of auto, off',
    default: 'auto',
    help: "tasks in a PID and mount namespace of their own where the daemon may (auto: they cannot see or signal the daemon, the state dir is read-only to them, the token hidden); off: they share the daemon's",
  },
  {
    flag: 'default-sandbox',
    key: 'defaultSandbox',
    schema: jsonOf(sandboxSchema),
    accepts: 'a JSON object like run\'s sandbox field, e.g. {"network":false} or {"write":["/work"],"network":false}',
    default: null,
    help: "the sandbox of every run that gives none (write left out: the task's cwd and the temporary directory)",
  },
  {
    flag: 'sandbox-floor',
    key: 'sandboxFloor',
    schema: jsonOf(sandboxSchema),
    accepts: 'a JSON object like run\'s sandbox field, e.g. {"write":["/work","/tmp"],"network":false}',
    default: null,
    help: 'the widest sandbox any run may have, applied to runs that give none and have no default (a member left out allows all of it)',
  },
  ...POLICY_OPTIONS,
  {
    flag: 'tasks-may-call',
    key: 'tasksMayCall',
    schema: z.enum(TASKS_MAY_CALL),
    accepts: `one of ${TASKS_MAY_CALL.join(', ')}`,
    default: 'same-sandbox',
    help: "what a call from one of the daemon's own tasks may do: same-sandbox, anything, and a run at most as wide as the caller's sandbox; off, nothing (403)",
  },
  {
    flag: 'cgroup-root',
    key: 'cgroupRoot',
    schema: text,
    accepts: 'a cgroup v2 folder the daemon may create cgroups in',
    default: null,
    help: 'where task cgroups go; default: the delegated cgroup, else a writable cgroup2 mount',
  },
  ...limitOptions(
    'task-memory-limit-mb',
    'taskMemoryLimitMb',
    integer(1, MAX_MEMORY_LIMIT_MB),
    `an integer of MiB from 1 to ${MAX_MEMORY_LIMIT_MB}`,
    'memory',
  ),
  ...limitOptions(
    'task-max-processes',
    'taskMaxProcesses',
    integer(1, MAX_PROCESSES_LIMIT),
    `an integer from 1 to ${MAX_PROCESSES_LIMIT}`,
    'processes and threads',
  ),
  ...limitOptions(
    'task-cpu-limit',
    'taskCpuLimit',
    cpus,
    `a number of CPUs from ${MIN_CPU_LIMIT} to ${MAX_CPU_LIMIT}`,
    'CPUs',
  ),
  {
    flag: 'log-level',
    key: 'logLevel',
    schema: z.enum(LOG_LEVELS),
    accepts: `one of ${LOG_LEVELS.join(', ')}`,
    default: 'info',
    help: 'the least severe log lines written to stderr',
  },
];

/** A limit's default and its ceiling, as two options. */
function limitOptions(flag: string, key: keyof Config, schema: z.ZodType, accepts: string, what: string): OptionSpec[] {
  return [
    { flag, key, schema, accepts, default: null, help: `each task's ${what} limit unless its run sets its own` },
    {
      flag: `${flag}-ceiling`,
      key: `${key}Ceiling` as keyof Config,
      schema,
      accepts,
      default: null,
      help: `the most ${what} a run may ask for (and the limit of one that asks for none, without a default)`,
    },
  ];
}

export const envName = (option: OptionSpec) =>
  option.env ?? `HIVE_BASH_${option.flag.toUpperCase().replaceAll('-', '_')}`;
