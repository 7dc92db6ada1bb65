// A task's sandbox: the directories it may write beneath (Landlock, native/src/sandbox.c) and
// whether it reaches any network (else a network namespace of its own with only loopback up); what
// this host can enforce of it; and the shim's flags that set it up in the leader before its exec.
import { readFileSync } from '../builtins.js';
import { loadNative } from './native.js';

export interface Sandbox {
  /** Absolute directories whose subtrees the task may change; everywhere else is read-only to it. */
  write: string[];
  /** false: a network namespace of its own, loopback only. */
  network: boolean;
}

/** What this host can enforce: null where it can, else why not. */
export interface SandboxSupport {
  writes: string | null;
  network: string | null;
  /** The Landlock ABI the kernel offers (0: none). */
  landlockAbi: number;
}

/** CAP_SYS_ADMIN's bit in /proc/self/status's CapEff, which unshare(CLONE_NEWNET) needs. */
const CAP_SYS_ADMIN = 21n;

/**
 * Probes once at start. HIVE_TEST_NO_LANDLOCK=1 makes the Landlock probe fail, so that a test can
 * see how a host without it is told (this project's machines all have it).
 */
export function probeSandboxSupport(spawner: 'native' | 'node'): SandboxSupport {
  const native = loadNative();
  if (spawner === 'node' || 'error' in native) {
    const why = 'needs the native spawner, whose shim sets the sandbox up';
    return { writes: why, network: why, landlockAbi: 0 };
  }
  const abi = process.env.HIVE_TEST_NO_LANDLOCK === '1' ? 0 : native.addon.landlockAbi();
  const writes =
    abi > 0 ? null : 'this kernel offers no Landlock (it needs Linux 5.13 with Landlock enabled in the LSM list)';
  return {
    writes,
    network: hasSysAdmin()
      ? null
      : 'a network namespace needs CAP_SYS_ADMIN, which the daemon does not have (run it as root)',
    landlockAbi: abi,
  };
}

function hasSysAdmin(): boolean {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
  return effective !== undefined && ((BigInt(`0x${effective}`) >> CAP_SYS_ADMIN) & 1n) === 1n;
}

/** True when `dir` is `root` or beneath it (both absolute and normalised). */
export function isBeneath(dir: string, root: string): boolean {
  return root === '/' || dir === root || dir.startsWith(`${root}/`);
}

/** Whether the sandbox confines writes at all: a writable / leaves nothing for Landlock to do. */
export const confinesWrites = (sandbox: Sandbox): boolean => !sandbox.write.includes('/');

/** In words: "write beneath /work, /tmp; no network". */
export function describeSandbox(sandbox: Sandbox): string {
  return `write beneath ${sandbox.write.length === 0 ? 'nothing' : sandbox.write.join(', ')}; ${sandbox.network ? 'network' : 'no network'}`;
}

/** The shim's flags for `sandbox` (native/src/shim.c): -N, -L and a -w per directory. */
export function sandboxShimArgs(sandbox: Sandbox | null): string[] {
  if (sandbox === null) return [];
  return [
    ...(sandbox.network ? [] : ['-N']),
    ...(confinesWrites(sandbox) ? ['-L', ...sandbox.write.flatMap((dir) => ['-w', dir])] : []),
  ];
}
