// Waits that never make an agent poll: until a task's output matches a pattern, one of its
// processes listens on a port, it ends, or the time runs out, whichever comes first.
import { setTimeout as sleep } from 'node:timers/promises';
import { isFinished } from '../../shared/task-states.js';
import type { TaskService } from '../tasks/task-service.js';
import type { ReadPool } from '../output/read-pool.js';
import { matchOutput } from './output-match.js';
import type { GivenPattern } from './wait-pattern.js';

export type WaitResult = 'matched' | 'listening' | 'ended' | 'timeout';

export interface ReadinessWant {
  /** A line of output that matches it. */
  pattern: GivenPattern | null;
  /** A TCP port one of the task's processes listens on. */
  port: number | null;
}

export interface ReadinessOutcome {
  result: WaitResult;
  /** The whole line that matched (cut to 1 KiB), for `matched`. */
  matchedLine: string | null;
}

/** How often the task's sockets are looked at while a wait_for_port waits (no event says a port opened). */
const PORT_POLL_MS = 50;

/**
 * Waits up to `seconds` for what `want` asks of task `id`; a finished task's whole output still
 * counts. The pattern runs in the turns of `client` (call-clients.ts).
 */
export async function awaitReadiness(
  tasks: TaskService,
  reads: ReadPool,
  id: string,
  want: ReadinessWant,
  seconds: number,
  client: string,
): Promise<ReadinessOutcome> {
  const stop = new AbortController();
  const paths = tasks.outputPaths(id);
  const waits: Array<Promise<ReadinessOutcome | null>> = [
    sleep(seconds * 1000, { result: 'timeout', matchedLine: null } as const, { signal: stop.signal }).catch(() => null),
  ];
  const ended = tasks.whenEnded(id);
  const started = tasks.whenStarted(id);
  if (want.pattern !== null) {
    const pattern = want.pattern;
    waits.push(
      // At its end, what it wrote last is read before the end is taken as the answer. The shim
      // writes the output file itself, so a line can be there before its report of the start (with
      // the pid) has arrived: a match waits for that, so that the answer carries the pid.
      matchOutput(reads, client, [paths.stdout, paths.stderr], pattern, stop.signal, ended).then(async (line) => {
        if (stop.signal.aborted) return null;
        if (line === null) return { result: 'ended', matchedLine: null } as const;
        await started;
        return { result: 'matched', matchedLine: line } as const;
      }),
    );
  } else {
    waits.push(ended.then(() => ({ result: 'ended', matchedLine: null }) as const));
  }
  if (want.port !== null) waits.push(waitForPort(tasks, id, want.port, stop.signal));
  try {
    // Each wait resolves null only once stopped; the first answer wins.
    return await Promise.race(waits.map((wait) => wait.then((outcome) => outcome ?? new Promise<never>(() => {}))));
  } finally {
    stop.abort();
  }
}

async function waitForPort(
  tasks: TaskService,
  id: string,
  port: number,
  signal: AbortSignal,
): Promise<ReadinessOutcome | null> {
  while (!signal.aborted) {
    const record = tasks.get(id);
    if ((await tasks.findPorts(record, port)).listed.length > 0) return { result: 'listening', matchedLine: null };
    if (isFinished(record.state) && !tasks.isLive(record)) return null; // the end answers
    await sleep(PORT_POLL_MS, undefined, { signal }).catch(() => {});
  }
  return null;
}
