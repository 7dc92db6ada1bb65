// A task's sandbox: the directories it may write beneath (read-only mounts elsewhere and Landlock)
// and whether it reaches any network (else a network namespace of its own with only loopback up);
// every sandboxed task also gets a mount namespace and a devpts instance of its own, has the
// kernel's interfaces read-only and no devices but a few, loses the capabilities it has no use for,
// and cannot type into terminals, use the keyrings or io_uring, or make a user namespace
// (native/src/sandbox.h). What this host can enforce of it, and the shim's flags that set it up in
// the leader before its exec.
import { readFileSync } from 'node:fs';
import type { Sandbox } from '../shared/sandbox.js';
import { loadNative } from './native.js';

/** What this host can enforce: null where it can, else why not. */
export interface SandboxSupport {
  /** What every sandbox needs: a mount namespace per task, capabilities dropped, a seccomp filter. */
  isolation: string | null;
  writes: string | null;
  network: string | null;
  /** The Landlock ABI the kernel offers (0: none). */
  landlockAbi: number;
}

/** Bits of /proc/self/status's CapEff: the namespaces need CAP_SYS_ADMIN, dropping capabilities CAP_SETPCAP. */
const CAP_SYS_ADMIN = 21n;
const CAP_SETPCAP = 8n;

/**
 * Probes once at start. HIVE_TEST_NO_LANDLOCK=1 makes the Landlock probe fail, so that a test can
 * see how a host without it is told (this project's machines all have it).
 */
export function probeSandboxSupport(spawner: 'native' | 'node'): SandboxSupport {
  const native = loadNative();
  if (spawner === 'node' || 'error' in native) {
    const why = 'needs the native spawner, whose shim sets the sandbox up';
    return { isolation: why, writes: why, network: why, landlockAbi: 0 };
  }
  const abi = process.env.HIVE_TEST_NO_LANDLOCK === '1' ? 0 : native.addon.landlockAbi();
  const writes =
    abi > 0 ? null : 'this kernel offers no Landlock (it needs Linux 5.13 with Landlock enabled in the LSM list)';
  const gap = native.addon.sandboxKernelGap();
  const isolation = !hasCapabilities(CAP_SYS_ADMIN, CAP_SETPCAP)
    ? 'a mount namespace per task and dropping its capabilities need CAP_SYS_ADMIN and CAP_SETPCAP, which the daemon does not have (run it as root)'
    : gap === null
      ? null
      : `this kernel lacks ${gap}`;
  return {
    isolation,
    writes,
    network: hasCapabilities(CAP_SYS_ADMIN)
      ? null
      : 'a network namespace needs CAP_SYS_ADMIN, which the daemon does not have (run it as root)',
    landlockAbi: abi,
  };
}

function hasCapabilities(...bits: bigint[]): boolean {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
  return effective !== undefined && bits.every((bit) => ((BigInt(`0x${effective}`) >> bit) & 1n) === 1n);
}

/** What of `sandbox` this host cannot enforce, in words: empty when it can enforce it all. */
export function sandboxGaps(sandbox: Sandbox, support: SandboxSupport): string[] {
  return [
    support.isolation !== null ? `the task cannot be isolated: ${support.isolation}` : null,
    confinesWrites(sandbox) && support.writes !== null ? `writes cannot be confined: ${support.writes}` : null,
    !sandbox.network && support.network !== null ? `the network cannot be cut: ${support.network}` : null,
  ].filter((why) => why !== null);
}

/**
 * The kernel interface mount that holds `dir` (native/src/sandbox-kernel.c), or null: none, or no
 * native addon to tell (and then no sandbox runs at all: sandboxGaps).
 */
export function kernelMountOf(dir: string): { point: string; type: string } | null {
  const native = loadNative();
  return 'error' in native ? null : native.addon.kernelMountOf(dir);
}

/** True when `dir` is `root` or beneath it (both absolute and normalised). */
export function isBeneath(dir: string, root: string): boolean {
  return root === '/' || dir === root || dir.startsWith(`${root}/`);
}

/** Whether the sandbox confines writes at all: a writable / leaves nothing for Landlock to do. */
export const confinesWrites = (sandbox: Sandbox): boolean => !sandbox.write.includes('/');

/** The shim's flags for `sandbox` (native/src/shim.c): -S, -N, -L and a -w per directory. */
export function sandboxShimArgs(sandbox: Sandbox | null): string[] {
  if (sandbox === null) return [];
  return [
    '-S',
    ...(sandbox.network ? [] : ['-N']),
    ...(confinesWrites(sandbox) ? ['-L', ...sandbox.write.flatMap((dir) => ['-w', dir])] : []),
  ];
}
