// The directories no sandboxed task may write, whatever its run, the --default-sandbox or the floor
// says: those in a kernel interface mount (proc, sysfs, cgroupfs and the like, wherever mounted,
// and the mount at /dev), which every sandboxed task has read-only (native/src/sandbox-kernel.c),
// and /dev/shm, of which every sandboxed task has one of its own. A write directory there is
// refused before the start, naming why.
import { isBeneath, kernelMountOf } from '../../process/sandbox.js';

/** What a kernel interface mount of each type would give a task that could write it. */
const REACH_BY_TYPE: Record<string, string> = {
  proc: "the kernel's processes and settings (a program named in /proc/sys/kernel/core_pattern runs as root on the host)",
  sysfs: "the kernel's devices, drivers and settings",
  cgroup: "control groups (a task that writes cgroup.procs moves itself out of its own, and out of kill's reach)",
  cgroup2: "control groups (a task that writes cgroup.procs moves itself out of its own, and out of kill's reach)",
  devtmpfs: "devices (a disk's node reaches the whole disk)",
  devpts: "terminals, other tasks' and the host's",
};
const DEVICES = REACH_BY_TYPE.devtmpfs!;
const KERNEL_REACH = 'an interface to the kernel, not files';

/** What to do instead, for a refusal's message. */
export const KERNEL_DIR_REMEDY =
  'give write directories outside /proc, /sys, /dev and the other kernel file systems (a sandbox without "write" writes in the run\'s cwd and the temporary directory)';

/** Why no sandboxed task may write `dir` (absolute, its symlinks resolved), in words; null when one may. */
export function kernelDirProblem(dir: string): string | null {
  if (isBeneath(dir, '/dev/shm'))
    return `${dir} is ${dir === '/dev/shm' ? '' : 'in /dev/shm, '}the task's own: every sandboxed task has a /dev/shm of its own (a tmpfs), writable without asking`;
  const mount = kernelMountOf(dir);
  if (mount === null) return null;
  const reach = mount.point === '/dev' ? DEVICES : (REACH_BY_TYPE[mount.type] ?? KERNEL_REACH);
  const where =
    dir === mount.point ? `${dir} is a ${mount.type} mount` : `${dir} is in ${mount.point}, a ${mount.type} mount`;
  return `${where}: ${reach}`;
}

/** A write directory as a refusal names it: its resolved path and where it was given ("sandbox.write[0]": "/given" resolves to it). */
export interface NamedWriteDir {
  resolved: string;
  /** The field that gave it, and how it resolved where that differs. */
  named: string;
}

/** "a sandbox no task may have: ..." for the first of `dirs` no sandboxed task may write; null when there is none. */
export function kernelDirRefusal(dirs: NamedWriteDir[]): string | null {
  for (const { resolved, named } of dirs) {
    const problem = kernelDirProblem(resolved);
    if (problem !== null)
      return `a sandbox no task may have: it lets the task write in ${resolved} (${named}), and ${problem}`;
  }
  return null;
}
