// Which sandbox a task runs in: what its run asks for, else the operator's default, else the floor;
// never wider than the floor (refused, naming what the floor allows), never writing where no
// sandboxed task may (the kernel's interfaces: kernel-dirs.ts), and never one this host cannot
// enforce (refused, naming what is missing), so no task runs less confined than it asked. Write
// directories are compared, and enforced, as they resolve (write-dirs.ts).
import { tmpdir } from 'node:os';
import { z } from 'zod';
import { resolve } from 'node:path';
import { ConfigError, SandboxNotAllowedError, SandboxUnavailableError } from '../../errors.js';
import { confinesWrites, sandboxGaps, type SandboxSupport } from '../../process/sandbox.js';
import { describeSandbox, type Sandbox } from '../../shared/sandbox.js';
import { KERNEL_DIR_REMEDY, kernelDirRefusal } from './kernel-dirs.js';
import {
  defaultWriteField,
  nameWriteDir,
  resolvedOrAsIs,
  resolveWriteDir,
  widerThanFloor,
  type WriteDir,
} from './write-dirs.js';

const noNul = (text: string) => !text.includes('\0');
export const MAX_SANDBOX_DIRS = 64;

/** run's sandbox: each issue inside names its member (sandbox.write[0]) with a "must be ..." of its own. */
export const sandboxSchema = z.strictObject(
  {
    write: z
      .array(
        z
          .string({ error: 'must be an absolute path' })
          .refine((dir) => dir.startsWith('/') && noNul(dir), { error: 'must be an absolute path' }),
        {
          error: `must be an array of at most ${MAX_SANDBOX_DIRS} absolute directory paths`,
        },
      )
      .max(MAX_SANDBOX_DIRS, { error: `must be an array of at most ${MAX_SANDBOX_DIRS} absolute directory paths` })
      .optional()
      .describe('Absolute dirs it may write in (default cwd, temp).'),
    network: z.boolean({ error: 'must be true or false' }).optional().describe('false: loopback only (default true).'),
  },
  { error: 'must be an object with "write" and "network", both optional' },
);

/** A run's sandbox field as given (also --default-sandbox and --sandbox-floor): either member may be left out. */
export type RequestedSandbox = z.output<typeof sandboxSchema>;

/** The floor as given: a member left out allows all of it (write beneath /, network). */
export const completeFloor = (floor: RequestedSandbox): Sandbox => ({
  write: (floor.write ?? ['/']).map((dir) => resolve(dir)),
  network: floor.network ?? true,
});

/** The task a run comes from (a call from one of its processes); its sandbox (null: none) bounds the run's. */
export interface RunCaller {
  taskId: string;
  sandbox: Sandbox | null;
}

/** The operator's --default-sandbox and --sandbox-floor; null: none. */
export interface SandboxPolicy {
  defaults: RequestedSandbox | null;
  floor: Sandbox | null;
}

/**
 * The sandbox a task gets, in full. A member left out is the floor's, so that a run narrows the
 * floor by what it says and never has to repeat it; without a floor (or one that leaves writes
 * free), write is the task's cwd and the temporary directory, and network is true.
 */
export function completeSandbox(
  requested: RequestedSandbox,
  cwd: string,
  env: Record<string, string>,
  floor: Sandbox | null,
): Sandbox {
  const write =
    requested.write ?? (floor !== null && confinesWrites(floor) ? floor.write : [cwd, env.TMPDIR ?? tmpdir()]);
  return {
    write: [...new Set(write.map((dir) => resolve(dir)))],
    network: requested.network ?? floor?.network ?? true,
  };
}

/** What of a run its sandbox depends on: the sandbox it asked for (undefined: none), its cwd, and the task that asked for it. */
export interface SandboxedRun {
  sandbox?: RequestedSandbox | undefined;
  cwd: string;
  caller: RunCaller | null;
}

/**
 * The sandbox for `run`, or null; throws a coded refusal. A run that a task asked for (its
 * `caller`) has that task's sandbox as a second floor: one that gives none gets it, and a member
 * it leaves out is the caller's.
 */
export function resolveSandbox(
  { sandbox: requested, cwd, caller }: SandboxedRun,
  env: Record<string, string>,
  policy: SandboxPolicy,
  support: SandboxSupport,
): Sandbox | null {
  const callerFloor = caller?.sandbox ?? null;
  const source =
    requested !== undefined
      ? '"sandbox"'
      : callerFloor !== null
        ? `the sandbox of task ${caller!.taskId}, which made this call`
        : policy.defaults !== null
          ? "the daemon's --default-sandbox"
          : "the daemon's --sandbox-floor";
  const chosen = requested ?? callerFloor ?? policy.defaults ?? policy.floor;
  if (chosen === null) return null;
  const completed = completeSandbox(chosen, cwd, env, callerFloor ?? policy.floor);
  // Each directory named where it was given: the run's own by its index, else by where it came from.
  const writeDirs =
    requested?.write !== undefined
      ? requested.write.map((dir, i) => resolveWriteDir(dir, `"sandbox.write[${i}]"`, `"sandbox.write[${i}]" must be`))
      : completed.write.map((dir) =>
          resolveWriteDir(
            dir,
            defaultWriteField(dir, cwd, env) ?? `a write directory of ${source}`,
            `the write directories of ${source} must each be`,
          ),
        );
  const forbidden = kernelDirRefusal(writeDirs.map((dir) => ({ resolved: dir.resolved, named: nameWriteDir(dir) })));
  if (forbidden !== null) throw new SandboxNotAllowedError(source, forbidden, KERNEL_DIR_REMEDY);
  const sandbox = { ...completed, write: [...new Set(writeDirs.map((dir) => dir.resolved))] };
  const beyond =
    beyondLimit(
      writeDirs,
      sandbox.network,
      callerFloor,
      `the sandbox of task ${caller?.taskId}, which made this call`,
      'that sandbox',
    ) ?? beyondLimit(writeDirs, sandbox.network, policy.floor, "the operator's floor (--sandbox-floor)", 'the floor');
  if (beyond !== null) throw new SandboxNotAllowedError(source, beyond);
  const missing = sandboxGaps(sandbox, support);
  if (missing.length > 0) throw new SandboxUnavailableError(source, missing.join('; '));
  return sandbox;
}

/** "wider than NAME: WHY, and SHORT allows at most: ..." when a sandbox allows more than `limit` (null: none); else null. */
function beyondLimit(
  writeDirs: WriteDir[],
  network: boolean,
  limit: Sandbox | null,
  name: string,
  short: string,
): string | null {
  const why = limit === null ? null : widerThanFloor(writeDirs, network, limit);
  return why === null ? null : `wider than ${name}: ${why}, and ${short} allows at most: ${describeSandbox(limit!)}`;
}

/**
 * The operator's policy from --default-sandbox and --sandbox-floor; a default wider than the floor,
 * or either naming a write directory no sandboxed task may have, stops the start (a ConfigError).
 */
export function sandboxPolicyOf(defaults: RequestedSandbox | null, floorGiven: RequestedSandbox | null): SandboxPolicy {
  for (const [flag, given] of [
    ['--default-sandbox', defaults],
    ['--sandbox-floor', floorGiven],
  ] as const) {
    const forbidden = kernelDirRefusal(
      (given?.write ?? []).map((dir, i) => ({ resolved: resolvedOrAsIs(resolve(dir)), named: `its "write"[${i}]` })),
    );
    if (forbidden !== null) throw new ConfigError(`${flag} is ${forbidden}; ${KERNEL_DIR_REMEDY}`);
  }
  const floor = floorGiven === null ? null : completeFloor(floorGiven);
  // A default without write takes each run's cwd: that is checked run by run.
  const wider =
    floor === null || defaults?.write === undefined
      ? null
      : widerThanFloor(
          defaults.write.map((dir, i) => {
            const given = resolve(dir);
            return { given, resolved: resolvedOrAsIs(given), field: `its "write"[${i}]` };
          }),
          defaults.network ?? floor.network,
          floor,
        );
  if (wider !== null)
    throw new ConfigError(
      `--default-sandbox is wider than the operator's floor (--sandbox-floor): ${wider}, and the floor allows at most: ${describeSandbox(floor!)}`,
    );
  return { defaults, floor };
}

/**
 * Throws a ConfigError where the operator's default or floor needs what this host cannot enforce
 * (as an unenforceable limit default does): every run it covers would be refused.
 */
export function checkSandboxPolicy({ defaults, floor }: SandboxPolicy, support: SandboxSupport): void {
  for (const [flag, sandbox] of [
    // A default without `write` confines each run's writes to its cwd (and the temporary directory).
    [
      '--default-sandbox',
      defaults === null ? null : { write: defaults.write ?? [tmpdir()], network: defaults.network ?? true },
    ],
    ['--sandbox-floor', floor],
  ] as const) {
    const gaps = sandbox === null ? [] : sandboxGaps(sandbox, support);
    if (gaps.length > 0)
      throw new ConfigError(
        `${flag} cannot be enforced here (${gaps.join('; ')}); /healthz says what sandboxing this host supports`,
      );
  }
}

/** What sandboxing this host can enforce, and the operator's policy (with --tasks-may-call), for the start line and /healthz. */
export function describeSandboxing(support: SandboxSupport, policy: SandboxPolicy, tasksMayCall: string) {
  const parts =
    support.withoutNamespaces === null ? describeFullSandbox(support) : describeSandboxWithoutNamespaces(support);
  return { ...parts, default: policy.defaults, floor: policy.floor, tasks_may_call: tasksMayCall };
}

/** The sandbox without namespaces (SandboxSupport.withoutNamespaces): what it gives, and what of the full one it does not. */
function describeSandboxWithoutNamespaces(support: SandboxSupport) {
  return {
    in_force: `landlock+seccomp, no namespace: ${support.withoutNamespaces}`,
    isolation:
      "no_new_privs, a Landlock domain of its own, TIOCSTI, TIOCLINUX, the keyrings, io_uring and user namespaces refused; no mount namespace: the kernel's interfaces, devices, /tmp and /dev/shm are the host's",
    writes: `Landlock ABI ${support.landlockAbi}, without read-only mounts: changes of mode, owner, times and extended attributes are not refused`,
    network: 'a seccomp filter: no socket() but AF_UNIX, so no loopback either',
  };
}

/** The sandbox with namespaces, or why there is none. */
function describeFullSandbox(support: SandboxSupport) {
  return {
    in_force: support.isolation === null ? 'namespaces, Landlock and seccomp' : 'none',
    isolation:
      support.isolation === null
        ? "a mount namespace and a devpts instance per task, the kernel's interfaces read-only, no device but the null-like ones and its terminals, capabilities dropped, TIOCSTI, TIOCLINUX, the keyrings, io_uring and user namespaces refused"
        : `unavailable: ${support.isolation}`,
    writes:
      support.writes === null
        ? `Landlock ABI ${support.landlockAbi} and read-only mounts`
        : `unavailable: ${support.writes}`,
    network: support.network === null ? 'a network namespace per task' : `unavailable: ${support.network}`,
  };
}
