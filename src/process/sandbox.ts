// A task's sandbox: the directories it may write beneath (read-only mounts elsewhere and Landlock)
// and whether it reaches any network (else a network namespace of its own with only loopback up);
// every sandboxed task also gets a mount namespace and a devpts instance of its own, has the
// kernel's interfaces read-only and no devices but a few, loses the capabilities it has no use for,
// cannot type into terminals, use the keyrings or io_uring, or make a user namespace, and is in a
// Landlock domain of its own, out of which it reaches no other process (native/src/sandbox.h).
// What this host can enforce of it, and the shim's flags that set it up in the leader before its
// exec. Where neither the daemon nor its tasks can have a namespace, a sandbox is had without any:
// no_new_privs, Landlock and a seccomp filter that refuses every socket but a unix one
// (withoutNamespaces; docs/sandbox-and-policy.md says what it does not give).
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
  /**
   * Why sandboxes here are had without namespaces (no_new_privs, Landlock and a seccomp filter that
   * refuses every socket but a unix one: the shim's -F), or null: with them.
   */
  withoutNamespaces: string | null;
}

/** Bits of /proc/self/status's CapEff: the namespaces need CAP_SYS_ADMIN, loopback up CAP_NET_ADMIN, dropping capabilities CAP_SETPCAP. */
const CAP_SYS_ADMIN = 21n;
const CAP_SETPCAP = 8n;
const CAP_NET_ADMIN = 12n;

/**
 * Probes once at start. In the tasks' namespace (`inNamespace`) a shim holds every capability of
 * the user namespace of the daemon's that tasks run in, so what decides is whether a sandbox's
 * set-up, which the init tries there, got through (`refusedThere`: why not, or null); elsewhere
 * the daemon's own capabilities (`namespaceReason`: why the tasks' namespace is not in force, or
 * null). HIVE_TEST_NO_LANDLOCK=1 makes the Landlock probe fail, so that a
 * test can see how a host without it is told (this project's machines all have it).
 */
export function probeSandboxSupport(
  spawner: 'native' | 'node',
  inNamespace: boolean,
  refusedThere: string | null,
  namespaceReason: string | null,
): SandboxSupport {
  const native = loadNative();
  if (spawner === 'node' || 'error' in native) {
    const why = 'needs the native spawner, whose shim sets the sandbox up';
    return { isolation: why, writes: why, network: why, landlockAbi: 0, withoutNamespaces: null };
  }
  const abi = process.env.HIVE_TEST_NO_LANDLOCK === '1' ? 0 : native.addon.landlockAbi();
  const writes =
    abi > 0 ? null : 'this kernel offers no Landlock (it needs Linux 5.13 with Landlock enabled in the LSM list)';
  const base: SandboxSupport = { isolation: null, writes, network: null, landlockAbi: abi, withoutNamespaces: null };
  if (inNamespace) return withIsolation({ ...base, isolation: refusedThere });
  const gap = native.addon.sandboxKernelGap();
  const network = hasCapabilities(CAP_SYS_ADMIN, CAP_NET_ADMIN)
    ? null
    : `a network namespace with its loopback up needs CAP_SYS_ADMIN and CAP_NET_ADMIN, which the daemon does not have, nor its tasks: ${NO_NAMESPACE}`;
  if (!hasCapabilities(CAP_SYS_ADMIN, CAP_SETPCAP))
    return withoutNamespaces({ ...base, network }, gap, namespaceReason);
  return withIsolation({ ...base, network, isolation: gap === null ? null : `this kernel lacks ${gap}` });
}

/**
 * Where neither the daemon nor its tasks can have namespaces: the sandbox without them, which needs
 * Landlock and seccomp (`gap`: what the kernel lacks of the full sandbox's calls), and a daemon that
 * holds no capability (a root one without CAP_SYS_ADMIN would leave its tasks CAP_FOWNER and
 * CAP_CHOWN over every file, which no read-only mount keeps from changing modes and owners).
 */
function withoutNamespaces(base: SandboxSupport, gap: string | null, namespaceReason: string | null): SandboxSupport {
  const why = `a mount namespace per task and dropping its capabilities need CAP_SYS_ADMIN and CAP_SETPCAP, which the daemon does not have, nor its tasks: ${NO_NAMESPACE}`;
  if (holdsAnyCapability()) return withIsolation({ ...base, isolation: why });
  const missing =
    base.landlockAbi === 0
      ? 'Landlock (Linux 5.13 with Landlock in the LSM list)'
      : gap?.includes('seccomp') === true
        ? gap
        : null;
  if (missing !== null)
    return withIsolation({ ...base, isolation: `${why}; and the sandbox without namespaces needs ${missing}` });
  const reason = namespaceReason === null ? '' : ` (${namespaceReason})`;
  const withoutNamespaces = `the tasks' namespace is not in force${reason} and the daemon holds no capability, so no task can have a mount or a network namespace`;
  return { ...base, isolation: null, writes: null, network: null, withoutNamespaces };
}

/** Every sandbox needs its isolation: without it, no part of one can be enforced, and each part says why. */
function withIsolation(support: SandboxSupport): SandboxSupport {
  const { isolation } = support;
  return isolation === null
    ? support
    : { ...support, writes: support.writes ?? isolation, network: support.network ?? isolation };
}

/** Why tasks hold no capability of their own: the tasks' namespace, in a user namespace of the daemon's, is not in force. */
const NO_NAMESPACE =
  "the tasks' namespace, which gives them a user namespace of their own, is not in force (see task_isolation.namespace)";

/** Whether the daemon holds any capability, effective or permitted. */
function holdsAnyCapability(): boolean {
  const status = readFileSync('/proc/self/status', 'latin1');
  return ['CapEff', 'CapPrm'].some(
    (set) => !/^0+$/.test(new RegExp(`^${set}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? ''),
  );
}

function hasCapabilities(...bits: bigint[]): boolean {
  const effective = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'latin1'))?.[1];
  return effective !== undefined && bits.every((bit) => ((BigInt(`0x${effective}`) >> bit) & 1n) === 1n);
}

/** What of `sandbox` this host cannot enforce, in words: empty when it can enforce it all. */
export function sandboxGaps(sandbox: Sandbox, support: SandboxSupport): string[] {
  if (support.isolation !== null) return [`the task cannot be isolated: ${support.isolation}`];
  return [
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

/** Whether the sandbox confines writes at all: a writable / leaves Landlock no write to confine (the leader still enters a domain of its own). */
export const confinesWrites = (sandbox: Sandbox): boolean => !sandbox.write.includes('/');

/** The shim's flags for `sandbox` (native/src/shim.c): -S, -F without namespaces, -N, -L and a -w per directory. */
export function sandboxShimArgs(sandbox: Sandbox | null, withoutNamespaces: boolean): string[] {
  if (sandbox === null) return [];
  return [
    '-S',
    ...(withoutNamespaces ? ['-F'] : []),
    ...(sandbox.network ? [] : ['-N']),
    ...(confinesWrites(sandbox) ? ['-L', ...sandbox.write.flatMap((dir) => ['-w', dir])] : []),
  ];
}
