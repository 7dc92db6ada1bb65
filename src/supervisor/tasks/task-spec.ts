// Builds what a worker gets for one task (piscina's payload): the command, its environment, its
// output files and limits, and how it is started and contained.
import { taskCgroupDir, type HostSetup } from '../../process/containment.js';
import { planTaskCgroups } from '../../process/limits.js';
import type { TaskSpec } from '../../workers/protocol.js';
import type { TaskRecord } from '../model/task.js';
import type { OutputFiles } from '../output/output-files.js';
import type { RunRequest } from './live-task.js';
import { taskEnvironment } from './task-environment.js';

/** What one run may spend besides its cgroup limits: the kill's grace period and the output it keeps. */
export interface RunBudget {
  killGraceMs: number;
  maxOutputBytes: number;
}

export interface SpecContext {
  budget: RunBudget;
  /** The compiled command policy, or null. */
  policy: string | null;
  hostSetup: HostSetup;
  files: OutputFiles;
  baseEnv: Record<string, string>;
}

/** The worker's spec for `record` as `request` asked it, on `terminal` when it has one. */
export function buildTaskSpec(
  record: TaskRecord,
  request: RunRequest,
  terminal: TaskSpec['terminal'],
  context: SpecContext,
): TaskSpec {
  const paths = context.files.pathsOf(record.id);
  return {
    taskId: record.id,
    runKey: record.runKey,
    command: record.command,
    cwd: record.cwd,
    env: taskEnvironment(context.baseEnv, {
      id: record.id,
      runKey: record.runKey,
      env: request.env,
      pty: record.pty,
      interactive: record.interactive,
    }),
    stdin: request.stdin,
    interactive: request.interactive,
    terminal,
    stdoutPath: paths.stdout,
    stderrPath: paths.stderr,
    maxOutputBytes: context.budget.maxOutputBytes,
    timeoutMs: record.timeoutMs,
    killGraceMs: context.budget.killGraceMs,
    spawner: context.hostSetup.spawner,
    namespaceFd: context.hostSetup.namespace.pidfd,
    cpuWeight: context.hostSetup.cpuWeight,
    sandbox: record.sandbox,
    sandboxWithoutNamespaces: context.hostSetup.sandbox.withoutNamespaces !== null,
    cgroups: planTaskCgroups(
      context.hostSetup.controllers,
      taskCgroupDir(context.hostSetup, record.runKey),
      record.runKey,
      record.limits,
    ),
    limits: record.limits,
    policy: context.policy,
  };
}
