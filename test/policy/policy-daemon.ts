// A test daemon under a command policy, and the two programs its rules name: `hive-guarded` (its
// `push --force` denied, everything else of it allowed) and `hive-asked` (asked about), small
// scripts in a folder of their own that each task gets first on its PATH.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { startTestDaemon, type DaemonOptions, type TestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/processes.js';

export const POLICY = {
  default: 'allow',
  rules: [
    { match: ['hive-guarded', 'push', '--force'], decision: 'deny', reason: 'no force pushes' },
    { match: ['hive-asked'], decision: 'ask', reason: 'a person decides' },
  ],
};

export interface PolicyDaemon extends TestDaemon {
  /** The folder of the programs and the policy file; put it first on a task's PATH (`env`). */
  dir: string;
  env: { PATH: string };
}

/**
 * A daemon with POLICY (or `policy`) and its programs; the folder is removed at the end of `t`.
 * `placePrograms` may put more in its bin/, first on the daemon's PATH (where bare rule names are found).
 */
export async function startPolicyDaemon(
  t: TestContext,
  options: DaemonOptions & { policy?: object; placePrograms?: (dir: string) => void } = {},
): Promise<PolicyDaemon> {
  const dir = mkdtempSync(join(tmpdir(), 'hive-policy-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of ['hive-guarded', 'hive-asked']) {
    writeFileSync(join(dir, name), `#!/bin/sh\necho "${name} ran: $*"\n`);
    chmodSync(join(dir, name), 0o755);
  }
  options.placePrograms?.(dir);
  const file = join(dir, 'policy.json');
  writeFileSync(file, JSON.stringify(options.policy ?? POLICY));
  const path = `${join(dir, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`;
  const env = { ...options.env, PATH: path };
  const daemon = await startTestDaemon(t, { ...options, env, args: ['--policy', file, ...(options.args ?? [])] });
  return { ...daemon, dir, env: { PATH: `${dir}:${path}` } };
}

export interface WaitingExec {
  id: string;
  task: string;
  command: string;
  program: string;
  rule: number | null;
  reason: string;
}

/** GET /approvals: the execs that wait for a person now. */
export async function listApprovals(daemon: TestDaemon): Promise<WaitingExec[]> {
  const answer = await fetch(new URL('/approvals', daemon.url));
  return ((await answer.json()) as { approvals: WaitingExec[] }).approvals;
}

/** Waits until an exec of task `taskId` waits for a person (`count` of them), and returns them. */
export async function waitForApprovals(daemon: TestDaemon, taskId: string, count = 1): Promise<WaitingExec[]> {
  const found = await waitFor(async () => {
    const waiting = (await listApprovals(daemon)).filter((exec) => exec.task === taskId);
    return waiting.length >= count ? waiting : null;
  }, 30_000);
  if (found === null) throw new Error(`no exec of task ${taskId} waited for approval within 30 s`);
  return found;
}
