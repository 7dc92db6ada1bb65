// Which limits a task runs under: what its run asks for, else the daemon's defaults; never above the
// operator's ceilings, and never one that no cgroup here can enforce (refused, not run without it).
import { ConfigError, LimitUnavailableError, LIMITS_REMEDY, ToolInputError } from '../../errors.js';
import { echoValue } from '../../shared/echo.js';
import { LIMIT_CONTROLLER, type ControllerPlaces, type TaskLimits } from '../../process/limits.js';

/** The daemon's defaults and ceilings (--task-*-limit and --task-*-ceiling); null: none. */
export interface LimitPolicy {
  defaults: TaskLimits;
  ceilings: TaskLimits;
}

/** Each limit's run field and the daemon flag behind it, for messages. */
export const LIMIT_FIELDS: Record<keyof TaskLimits, { field: string; flag: string; unit: string }> = {
  memoryLimitMb: { field: 'memory_limit_mb', flag: '--task-memory-limit-mb', unit: 'MiB' },
  maxProcesses: { field: 'max_processes', flag: '--task-max-processes', unit: 'processes' },
  cpuLimit: { field: 'cpu_limit', flag: '--task-cpu-limit', unit: 'CPUs' },
};

/** The flags behind a policy: each limit's default and ceiling (--task-*, --task-*-ceiling); null: none. */
export type LimitFlags = {
  [
    K in
      | 'taskMemoryLimitMb'
      | 'taskMaxProcesses'
      | 'taskCpuLimit'
      | 'taskMemoryLimitMbCeiling'
      | 'taskMaxProcessesCeiling'
      | 'taskCpuLimitCeiling'
  ]: number | null;
};

/** The daemon's limit defaults and ceilings; one that no cgroup here can enforce stops the start (a ConfigError). */
export function limitPolicyOf(flags: LimitFlags, places: ControllerPlaces): LimitPolicy {
  const defaults: TaskLimits = {
    memoryLimitMb: flags.taskMemoryLimitMb,
    maxProcesses: flags.taskMaxProcesses,
    cpuLimit: flags.taskCpuLimit,
  };
  const ceilings: TaskLimits = {
    memoryLimitMb: flags.taskMemoryLimitMbCeiling,
    maxProcesses: flags.taskMaxProcessesCeiling,
    cpuLimit: flags.taskCpuLimitCeiling,
  };
  for (const key of Object.keys(defaults) as Array<keyof TaskLimits>) {
    const place = places[LIMIT_CONTROLLER[key]];
    const flag =
      defaults[key] !== null
        ? LIMIT_FIELDS[key].flag
        : ceilings[key] !== null
          ? `${LIMIT_FIELDS[key].flag}-ceiling`
          : null;
    if (flag !== null && 'missing' in place)
      throw new ConfigError(
        `${flag} needs the ${LIMIT_CONTROLLER[key]} cgroup controller, which cannot be used here: ${place.missing}; ${LIMITS_REMEDY}`,
      );
  }
  return { defaults, ceilings };
}

/** The limits for a run that asked for `requested`; throws a ToolInputError naming the field at fault. */
export function resolveTaskLimits(
  requested: Partial<TaskLimits>,
  policy: LimitPolicy,
  places: ControllerPlaces,
): TaskLimits {
  // A ceiling with no default caps a run that asks for nothing too.
  const limits = { ...policy.defaults };
  for (const key of Object.keys(limits) as Array<keyof TaskLimits>) limits[key] ??= policy.ceilings[key];
  for (const key of Object.keys(LIMIT_FIELDS) as Array<keyof TaskLimits>) {
    const { field, flag, unit } = LIMIT_FIELDS[key];
    const asked = requested[key];
    const ceiling = policy.ceilings[key];
    if (asked !== undefined && asked !== null) {
      if (ceiling !== null && asked > ceiling) {
        throw new ToolInputError(
          `Invalid run input: "${field}" must be at most ${ceiling} ${unit}, the ceiling the operator set (${flag}-ceiling); got ${echoValue(asked)}`,
        );
      }
      limits[key] = asked;
    }
    const place = places[LIMIT_CONTROLLER[key]];
    if (limits[key] !== null && 'missing' in place) {
      const source = asked === undefined || asked === null ? `the daemon's default (${flag})` : `"${field}"`;
      throw new LimitUnavailableError(source, field, LIMIT_CONTROLLER[key], place.missing);
    }
  }
  return limits;
}
