// Control of a task once admitted: signal a running one, end what a finished one left, and input
// (to an interactive task's stdin, answered by its worker). Cancelling a pending one is the service's.
import { InputRefusedError } from '../../errors.js';
import { killCgroup } from '../../process/cgroups.js';
import { taskCgroupDir, type HostSetup } from '../../process/containment.js';
import { killLingering } from '../../process/leftover-processes.js';
import type { KillSignal } from '../../shared/signals.js';
import type { LifecycleEvent } from '../model/lifecycle.js';
import type { TaskRecord } from '../model/task.js';
import type { InputAnswer, LiveTask } from './live-task.js';
import type { TaskProbes } from './task-probes.js';

/** How long input waits for the worker's answer (which comes after at most a second). */
const INPUT_ANSWER_MS = 10_000;

export interface KillOutcome {
  record: TaskRecord;
  /** The signal sent, or null when nothing was left to signal. */
  signal: KillSignal | null;
  /** Processes of a finished task that were still alive and are now being ended. */
  lingering: number;
}

export interface InputOutcome {
  record: TaskRecord;
  /** Bytes of the text the task had not taken when the answer came (it is not reading). */
  pendingBytes: number;
  stdinOpen: boolean;
}

/**
 * Kill and input for tasks the service holds. The service cancels a pending task itself; this
 * signals a running one through its worker, ends what a finished one left, and writes input.
 */
export class TaskControl {
  private inputRequests = 0;

  constructor(
    private readonly probes: TaskProbes,
    private readonly hostSetup: HostSetup,
    private readonly killGraceMs: number,
  ) {}

  /** Signals all of a running task, or ends what a finished one left; `task` is its live side, if held. */
  kill(task: LiveTask | undefined, record: TaskRecord, signal: KillSignal): KillOutcome {
    if (task?.worker && record.state === 'running') {
      this.signalThroughWorker(task, signal);
      return { record, signal, lingering: 0 };
    }
    const lingering = this.probes.countLingering(record);
    if (lingering > 0) {
      // Finished but not released: the worker still holds the task and ends what it left.
      if (task?.worker) this.signalThroughWorker(task, signal);
      else
        killLingering(
          { runKey: record.runKey, pgid: record.pgid, cgroupDir: taskCgroupDir(this.hostSetup, record.runKey) },
          signal,
          this.killGraceMs,
        );
    }
    return { record, signal: lingering > 0 ? signal : null, lingering };
  }

  /**
   * Has the task's worker signal all of it (the worker escalates, and reports the end). A force kill
   * of a task in a cgroup of its own is also written to its cgroup.kill here, at once, before the
   * answer: the hops to the worker and on to the shim took 3.8 to 8.0 ms before the shim's own
   * write (1,000 sleeps), and a kill is wanted now. The end's report may then reach the worker
   * before the kill does; the service still counts it as killed (`asKillsEnd`).
   */
  private signalThroughWorker(task: LiveTask, signal: KillSignal): void {
    task.killedAt ??= Date.now();
    task.worker?.send({ type: 'kill', signal });
    if (signal !== 'SIGKILL') return;
    const cgroupDir = taskCgroupDir(this.hostSetup, task.record.runKey);
    if (cgroupDir === null) return;
    task.cgroupKilled = true;
    killCgroup(cgroupDir);
  }

  /** Writes to an interactive task's stdin (then closes it with `eof`); answers once the task took it, or after a second. */
  async input(task: LiveTask | undefined, record: TaskRecord, text: string, eof: boolean): Promise<InputOutcome> {
    const { id } = record;
    if (!record.interactive) throw new InputRefusedError(id, 'ERR_INPUT_NOT_INTERACTIVE');
    if (record.state === 'pending') throw new InputRefusedError(id, 'ERR_INPUT_PENDING');
    if (!task?.worker || record.state !== 'running')
      throw new InputRefusedError(id, 'ERR_INPUT_ENDED', `it has ended (${record.state}), so its stdin is closed`);
    if (!task.stdinOpen) throw new InputRefusedError(id, 'ERR_INPUT_STDIN_CLOSED');
    if (eof) task.stdinOpen = false;
    const requestId = ++this.inputRequests;
    const answer = new Promise<InputAnswer>((resolve) => task.inputs.set(requestId, resolve));
    task.worker.send({ type: 'input', requestId, text, eof });
    // The worker answers within about a second; a call must never hang on one that cannot.
    const timer = setTimeout(
      () => task.inputs.get(requestId)?.({ pendingBytes: 0, refusal: { code: 'ERR_INPUT_NO_ANSWER', detail: null } }),
      INPUT_ANSWER_MS,
    );
    const { pendingBytes, refusal } = await answer;
    clearTimeout(timer);
    task.inputs.delete(requestId);
    // Refused for a full queue, nothing was written: an eof with it did not close stdin.
    if (eof && refusal?.code === 'ERR_INPUT_QUEUE_FULL') task.stdinOpen = true;
    if (refusal !== null) throw new InputRefusedError(id, refusal.code, refusal.detail ?? undefined);
    return { record: task.record, pendingBytes, stdinOpen: task.stdinOpen };
  }
}

/**
 * A worker's report as the service applies it. A force kill's cgroup.kill is written by the main
 * thread too (`signalThroughWorker`), so the leader's end by SIGKILL can reach its worker before the
 * kill does, and come as an exit: it is the kill's end all the same, unless the kernel's OOM killer
 * got there first (that end stays done, with oom_killed).
 */
export function asKillsEnd(task: LiveTask, report: LifecycleEvent): LifecycleEvent {
  if (report.type !== 'ended' || report.reason !== 'exit' || !task.cgroupKilled) return report;
  return report.signal === 'SIGKILL' && !report.oomKilled ? { ...report, reason: 'killed' } : report;
}

/** Answers every input still waiting on a task its worker let go of. */
export function refuseWaitingInputs(task: LiveTask): void {
  for (const answer of task.inputs.values())
    answer({
      pendingBytes: 0,
      refusal: { code: 'ERR_INPUT_ENDED', detail: 'the task ended before it took the input' },
    });
  task.inputs.clear();
}
