// What the daemon promises that does not hold where it runs, each said once at its start at warn
// level, naming what is missing and what gives it (the start line and /healthz say what is in force).
import { LIMITS_REMEDY } from '../errors.js';

/** The parts of the start line the promises are read from. */
export interface PromiseFacts {
  containment: { mode: string; reason: string };
  task_isolation: {
    namespace: { in_force: boolean; mounts_locked: boolean; own_proc: boolean; reason: string | null };
  };
  limits: Record<string, string>;
  sandbox: { in_force: string; isolation: string; writes: string; network: string };
}

/** What gives tasks their own namespaces where the daemon has none to give them. */
const REACH_REMEDY =
  "a user namespace of the daemon's gives them: a kernel and a security module that let a process make one (on Ubuntu, kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for the daemon's node), a container's seccomp profile that allows unshare; or root";

/** How the start line's sandbox.in_force begins for the sandbox without namespaces (task-sandbox.ts). */
const WITHOUT_NAMESPACES = 'landlock+seccomp, no namespace: ';

/** The run fields behind each cgroup controller. */
const LIMIT_FIELDS: Record<string, string> = { memory: 'memory_limit_mb', pids: 'max_processes', cpu: 'cpu_limit' };

/** One line per promise that does not hold here (empty when all do). */
export function unheldPromises(facts: PromiseFacts): string[] {
  return [...reachPromises(facts), ...sandboxPromises(facts), ...limitPromises(facts), ...containmentPromises(facts)];
}

function reachPromises({ task_isolation: { namespace } }: PromiseFacts): string[] {
  if (!namespace.in_force)
    return [
      `tasks can reach the daemon: they share its PID and mount namespaces (${namespace.reason}), so they can see and signal it, write its state dir and read its token; ${REACH_REMEDY}`,
    ];
  const lines: string[] = [];
  if (!namespace.mounts_locked)
    lines.push(
      `a task that is root can undo what keeps the state dir read-only and hides the daemon's files: ${namespace.reason}`,
    );
  if (!namespace.own_proc)
    lines.push(
      `tasks see processes outside their namespace in /proc, though they can signal only tasks: ${namespace.reason}`,
    );
  return lines;
}

function sandboxPromises({ sandbox }: PromiseFacts): string[] {
  if (sandbox.in_force.startsWith(WITHOUT_NAMESPACES))
    return [
      `sandboxes here have no namespace (${sandbox.in_force.slice(WITHOUT_NAMESPACES.length)}): Landlock confines writes but not changes of mode, owner, times or extended attributes (the full sandbox's read-only mounts), the kernel's interfaces, devices, /tmp and /dev/shm are the host's, and network false refuses every socket but a unix one (no loopback); ${REACH_REMEDY}`,
    ];
  const unavailable = (text: string) => (text.startsWith('unavailable: ') ? text.slice('unavailable: '.length) : null);
  const isolation = unavailable(sandbox.isolation);
  if (isolation !== null) return [`no run can be sandboxed here: ${isolation}`];
  const writes = unavailable(sandbox.writes);
  const network = unavailable(sandbox.network);
  return [
    ...(writes === null ? [] : [`no sandbox can confine a task's writes here: ${writes}`]),
    ...(network === null ? [] : [`no sandbox can cut a task's network here: ${network}`]),
  ];
}

function limitPromises({ limits }: PromiseFacts): string[] {
  const missing = Object.entries(limits).filter(([, place]) => place.startsWith('unavailable: '));
  if (missing.length === 0) return [];
  const each = missing.map(
    ([controller, place]) => `${LIMIT_FIELDS[controller] ?? controller} (${place.slice('unavailable: '.length)})`,
  );
  return [
    `no limit of these can be enforced here, and a run that asks for one is refused: ${each.join('; ')}; ${LIMITS_REMEDY}`,
  ];
}

function containmentPromises({ containment }: PromiseFacts): string[] {
  if (containment.mode !== 'node') return [];
  return [
    `tasks are held by their process group alone (Node's own spawn: ${containment.reason}): a process that calls setsid or double-forks outlives kill`,
  ];
}
