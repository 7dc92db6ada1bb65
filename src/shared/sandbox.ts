// A task's sandbox as a run asks for it and status shows it: the directories it may write beneath
// and whether it reaches any network. What a host can enforce of it, and how the shim sets it up,
// is the daemon's (src/process/sandbox.ts).

export interface Sandbox {
  /** Absolute directories whose subtrees the task may change; everywhere else is read-only to it. */
  write: string[];
  /** false: a network namespace of its own, loopback only. */
  network: boolean;
}

/** In words: "write beneath /work, /tmp; no network". */
export function describeSandbox(sandbox: Sandbox): string {
  return `write beneath ${sandbox.write.length === 0 ? 'nothing' : sandbox.write.join(', ')}; ${sandbox.network ? 'network' : 'no network'}`;
}
