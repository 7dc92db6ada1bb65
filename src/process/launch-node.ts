// Starts a task with Node's child_process (fork + exec) in a session and process group of its own:
// the fallback where the native addon cannot load. It cannot contain what leaves the group.
import { spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { SpawnError } from '../errors.js';
import {
  COMMAND_FD,
  NO_FINAL_FIGURES,
  TASK_SHELL_ARGV,
  type LaunchedTask,
  type LaunchRequest,
  type LeaderExit,
  type LeaderStart,
} from './launched-task.js';
import { NO_LIMIT_FIGURES } from './task-cgroups.js';
import { listGroupMembers, RUN_MARKER_NAME, runMarker } from './process-table.js';
import { readTaskProcesses } from './resources.js';
import { exitCodeOfSignal, type KillSignal } from '../shared/signals.js';
import type { TerminationTarget } from './terminate.js';

const GROUP_POLL_MS = 20;

export function launchNode(request: LaunchRequest): LaunchedTask {
  const [file, ...args] = TASK_SHELL_ARGV;
  const stdio: Array<'ignore' | 'pipe' | number> =
    'terminalFd' in request.stdio
      ? [request.stdio.terminalFd, request.stdio.terminalFd, request.stdio.terminalFd]
      : [request.stdio.stdin === 'null' ? 'ignore' : 'pipe', 'pipe', 'pipe'];
  stdio[COMMAND_FD] = 'pipe';
  const child = spawn(file!, args, {
    cwd: request.cwd,
    env: request.env,
    detached: true, // setsid(): the task leads a session and process group of its own
    // On a terminal the leader gets no controlling terminal here (no shim to take it): reads and
    // writes work, /dev/tty does not.
    stdio,
  });
  const commandPipe = child.stdio[COMMAND_FD] as Writable | null;
  commandPipe?.on('error', () => {}); // a leader that never read it (a failed spawn)
  commandPipe?.end(request.command);
  const started = new Promise<LeaderStart>((resolve) => {
    child.once('spawn', () =>
      resolve({ pid: child.pid!, pgid: child.pid!, namespacePid: null, startedAt: Date.now(), shimPid: null }),
    );
  });
  const exit = new Promise<LeaderExit>((resolve) => {
    child.once('error', (error) => {
      // Only a failed spawn reaches here before 'exit'; later errors are on the pipes.
      if (child.pid === undefined)
        resolve({
          exitCode: null,
          signal: null,
          error: SpawnError.fromSystemError(error).message,
          endedAt: Date.now(),
        });
    });
    child.once('exit', (code, signal) =>
      resolve({ exitCode: code ?? signalExitCode(signal), signal, error: null, endedAt: Date.now() }),
    );
  });
  const group = child.pid === undefined ? null : groupTarget(child.pid);
  // Not `request` in what outlives this call: its `env` may be megabytes, and a task may run for days.
  const marker = runMarker(request.env[RUN_MARKER_NAME] ?? '');
  return {
    stdout: child.stdout,
    stderr: child.stderr,
    outputBytes: null,
    stdin: child.stdin,
    started,
    exit,
    gone: () => group?.gone() ?? Promise.resolve(),
    signal: (signal) => group?.signal(signal),
    endStuck() {},
    cpuMsSoFar: () => null,
    countAlive: async () =>
      child.pid === undefined ? 0 : (await readTaskProcesses({ pgid: child.pid }, marker)).pids.length,
    limitFigures: () => NO_LIMIT_FIGURES,
    teardown: () => Promise.resolve(NO_FINAL_FIGURES),
    // The daemon refuses a policy without the native spawner, whose shim enforces it.
    onExec() {},
    answerExec() {},
  };
}

/** A process group as a termination target: signalled as a whole, gone when no member lives. */
export function groupTarget(pgid: number): TerminationTarget {
  let gone: Promise<void> | null = null;
  return {
    signal(signal: KillSignal) {
      try {
        process.kill(-pgid, signal);
      } catch {
        // the group is gone
      }
    },
    // Polled only once someone waits on it (a kill in progress): a /proc scan is not free.
    gone: () => (gone ??= waitForEmptyGroup(pgid)),
  };
}

async function waitForEmptyGroup(pgid: number): Promise<void> {
  while (listGroupMembers(pgid).length > 0) await sleep(GROUP_POLL_MS);
}

function signalExitCode(signal: NodeJS.Signals | null): number | null {
  const number = signal === null ? undefined : osConstants.signals[signal];
  return number === undefined ? null : exitCodeOfSignal(number);
}
