// What a launcher hands back for one started task, whichever way it was spawned.
import type { Readable, Writable } from 'node:stream';
import type { KillSignal } from './protocol.js';

export interface LeaderExit {
  exitCode: number | null;
  signal: string | null;
  /** Spawn failure text; the task never ran. */
  error: string | null;
  endedAt: number;
}

export interface LaunchedTask {
  stdout: Readable;
  stderr: Readable;
  /** The write end of the task's stdin pipe, or null when stdin is /dev/null. */
  stdin: Writable | null;
  /** Resolves once the leader runs, with its pid, the task's process group and when it was seen starting. */
  started: Promise<LeaderStart>;
  /** Resolves when the leader has exited (or failed to start). */
  exit: Promise<LeaderExit>;
  /** Resolves once nothing of the task is left alive. */
  gone(): Promise<void>;
  /** Sends `signal` to every process of the task. */
  signal(signal: KillSignal): void;
  /** Frees what the launcher holds once the task is gone; returns the task's CPU time if known. */
  release(): Promise<number | null>;
}

export interface LeaderStart {
  pid: number;
  pgid: number;
  /** Taken when the start was seen, not when a promise callback got to it: the exit may be seen in the same read. */
  startedAt: number;
}

export interface LaunchRequest {
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  stdin: string | null;
  cgroupDir: string | null;
}
