// Finds processes by a marker in their environment, which every descendant inherits, so a test
// can see (and at teardown kill) what a task left whatever its name, group or session.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { killPid, repeatUntilNoneFound } from '../../src/process/leftover-processes.js';
import { SHIM_PROCESS_NAME } from '../../src/process/process-table.js';

/**
 * Living (not zombie) processes whose environment holds `NAME=VALUE`. A task's shim (the root of
 * its tree, which exits once the tree is empty) is left out unless `withShims` is set.
 */
export function findMarkedProcesses(marker: string, withShims = false): number[] {
  const needle = Buffer.from(`\0${marker}\0`);
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]);
      if (!environ.includes(needle)) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      const shim = stat.includes(`(${SHIM_PROCESS_NAME})`);
      if (state !== 'Z' && state !== 'X' && (withShims || !shim)) pids.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/**
 * SIGKILLs every process with `marker`, pass after pass as the daemon ends what a killed shim held:
 * what a forking process started after a pass listed /proc, or was exec'ing while it read it, is
 * found by a later one.
 */
export async function killMarkedProcesses(marker: string): Promise<void> {
  await repeatUntilNoneFound(() => {
    const pids = findMarkedProcesses(marker, true);
    for (const pid of pids) killPid(pid);
    return pids.length;
  });
}

/**
 * A task's command that sends `signal` to every process it can see whose environment holds `marker`
 * (a test daemon's `HIVE_TEST_MARK=...`, which the daemon, its helpers and its tasks carry) and whose
 * name (`by: 'name'`) is, or whose command line (`by: 'command line'`) holds, `word`: an agent's
 * `killall node` or `pkill -f WORD` aimed only at what the test made. Where a task could see past
 * its namespace, it ends the test's own daemon, never another process of the host.
 */
export function killMarkedCommand(signal: string, word: string, marker: string, by: 'name' | 'command line'): string {
  const matches =
    by === 'name'
      ? `[ "$(cat $p/comm 2>/dev/null)" = '${word}' ]`
      : `tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -qF -- '${word}'`;
  return `for p in /proc/[0-9]*; do ${matches} && tr '\\0' '\\n' < $p/environ 2>/dev/null | grep -qxF '${marker}' && kill -${signal} \${p#/proc/}; done; true`;
}

/** Polls until `check` holds or `timeoutMs` passes; returns its last value. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * How many more processes (and threads) this process's pids cgroup and its ancestors let it start:
 * a default Podman container allows 2,048 in all. Infinity where no limit is set or none is seen.
 */
export function processRoom(): number {
  let room = Infinity;
  for (const line of readFileSync('/proc/self/cgroup', 'latin1').split('\n')) {
    const [, controllers, path] = line.split(':');
    if (path === undefined) continue;
    const root = controllers === 'pids' ? '/sys/fs/cgroup/pids' : controllers === '' ? '/sys/fs/cgroup' : null;
    if (root === null) continue;
    // Its own folder where the mount shows the whole tree; the mount's root in a container's view.
    let dir = [`${root}${path}`, root].find((candidate) => readText(`${candidate}/pids.current`) !== null);
    for (; dir !== undefined && dir.startsWith(root); dir = dir === root ? undefined : dirname(dir)) {
      const max = readText(`${dir}/pids.max`);
      const current = readText(`${dir}/pids.current`);
      if (max !== null && max !== 'max' && current !== null) room = Math.min(room, Number(max) - Number(current));
    }
  }
  return room;
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'latin1').trim();
  } catch {
    return null;
  }
}
