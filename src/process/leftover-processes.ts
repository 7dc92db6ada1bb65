// What is left of a task: counting and ending the processes that outlived its leader, or its shim,
// or the daemon that ran it. Every such kill path is here; a running task's kill is terminate.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import { groupTarget } from './launch-node.js';
import { killCgroup } from './cgroups.js';
import { removeTaskCgroupDirs } from './task-cgroups.js';
import { nativeAddon } from './native.js';
import {
  groupProcessesByMarker,
  hasEnvironmentMarker,
  listMarkedGroupMembers,
  listMarkedProcesses,
  RUN_MARKER_NAME,
  runMarker,
} from './process-table.js';
import { signalNumber, type KillSignal } from '../shared/signals.js';
import { terminate } from './terminate.js';

/** Where one run of a task can be found. */
export interface TaskProcesses {
  runKey: string;
  /** Its process group, once the leader started. */
  pgid: number | null;
  cgroupDir: string | null;
}

/** How long a start waits for a dead daemon's task cgroups to empty before removing them. */
const STALE_CGROUP_WAIT_MS = 2000;

/** Starts ending what is left in a finished task's process group (Node-spawned tasks only). */
export function killLingering(task: TaskProcesses, signal: KillSignal, graceMs: number): void {
  if (task.pgid !== null) terminate(groupTarget(task.pgid), signal, graceMs);
}

/** How many passes over /proc a kill of what is left makes at most, as the shim's own kill (native/src/shim-signals.c). */
const ORPHAN_KILL_ROUNDS = 100;

/**
 * Without its shim nothing reaps or signals the task: SIGKILL by cgroup, else its leader's process
 * group in one call, then by run marker through pidfds, pass after pass.
 */
export async function killOrphans(task: TaskProcesses): Promise<void> {
  if (task.cgroupDir !== null) return killCgroup(task.cgroupDir);
  const addon = nativeAddon();
  const marker = runMarker(task.runKey);
  // A living member with the marker holds the group's id: no other group can have it meanwhile.
  if (task.pgid !== null && listMarkedGroupMembers(task.pgid, marker).length > 0) killPid(-task.pgid);
  const killMarked = () => {
    const pids = listMarkedProcesses(marker);
    for (const pid of pids) {
      let pidfd: number;
      try {
        pidfd = addon.pidfdOpen(pid);
      } catch {
        continue; // gone meanwhile
      }
      // Checked after the pidfd is taken: if the pid was reused, the marker is not there.
      if (hasEnvironmentMarker(pid, marker)) addon.sendSignal(pidfd, signalNumber('SIGKILL'));
      addon.close(pidfd);
    }
    return pids.length;
  };
  await repeatUntilNoneFound(killMarked);
}

/** How long after a pass that found nothing, following one that found some, a last pass looks again. */
const CONFIRM_PASS_MS = 10;

/**
 * Runs `pass` (a kill that returns how many processes it found) until it finds nothing, at most
 * ORPHAN_KILL_ROUNDS times: a process forked just before its parent was killed may be mid-exec while
 * a pass reads it, when its environment reads empty, and the next pass sees it. Once a pass has found
 * some, nothing found is believed only when a pass CONFIRM_PASS_MS later finds nothing too.
 */
export async function repeatUntilNoneFound(pass: () => number): Promise<void> {
  let found = false;
  for (let round = 0; round < ORPHAN_KILL_ROUNDS; round++) {
    if (pass() > 0) found = true;
    else if (!found) return;
    else found = false;
    await sleep(found ? 1 : CONFIRM_PASS_MS);
  }
}

/**
 * At start-up: ends every process and cgroup of the last daemon's tasks, by cgroup and by run
 * marker (a task may have run under another containment, or left its cgroup).
 */
export async function killStaleTasks(tasks: Array<{ runKey: string; cgroupDirs: string[] }>): Promise<void> {
  await repeatUntilNoneFound(() => {
    const marked = groupProcessesByMarker(RUN_MARKER_NAME);
    const pids = tasks.flatMap((task) => marked.get(task.runKey) ?? []);
    for (const pid of pids) killPid(pid);
    return pids.length;
  });
  // Every cgroup at once (a task's v2 one is killed before the v1 ones of its limits, which wait for
  // it). One after the other, each waited for its processes to die and be reaped: 50 cgroups of an
  // orphaned `sleep` each took 525 and 536 ms to remove that way, 52 and 56 ms at once.
  await removeTaskCgroupDirs(
    tasks.flatMap((task) => task.cgroupDirs),
    STALE_CGROUP_WAIT_MS,
  );
}

/** SIGKILLs `pid` (a group if negative), if it is still there. */
export function killPid(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone meanwhile
  }
}
