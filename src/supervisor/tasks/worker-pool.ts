// The piscina pool of task workers. Each task is one long-lived piscina task on a worker thread;
// its reports come on its thread's report channel and control goes out on the shared control
// channel, both addressed by the task's run key.
import { availableParallelism } from 'node:os';
import { BroadcastChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import {
  CONTROL_CHANNEL_NAME,
  reportChannelName,
  type ControlMessage,
  type ReportEnvelope,
  type ReportMessage,
  type TaskOutcome,
  type TaskSpec,
} from '../../workers/protocol.js';

const WORKER_URL = new URL('../../workers/task-worker-entry.cjs', import.meta.url);
/** Tasks are I/O-bound and mostly wait: one worker hosts many at once, so piscina never queues. */
const TASKS_PER_WORKER = 1_000_000;

export interface DispatchedTask {
  send(message: ControlMessage): void;
  /** Resolves when the worker lets go of the task; never rejects. */
  outcome: Promise<TaskOutcome>;
}

interface Dispatched {
  onReport: (message: ReportMessage) => void;
  /** Control sent before the worker took the run; null once it has (then it is sent at once). */
  held: ControlMessage[] | null;
}

export class WorkerPool {
  private readonly piscina: Piscina;
  private readonly dispatched = new Map<string, Dispatched>();
  private readonly reportChannels: BroadcastChannel[] = [];
  private readonly control = new BroadcastChannel(CONTROL_CHANNEL_NAME);

  constructor() {
    const threads = Math.max(2, Math.min(4, availableParallelism()));
    this.piscina = new Piscina({
      filename: WORKER_URL.href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: TASKS_PER_WORKER,
      // 'sync' parks an idle worker in Atomics.wait, which would freeze the tasks it still hosts.
      atomics: 'disabled',
      // A worker's garbage is small and short-lived (a task's reports, output chunk wrappers);
      // V8's default young generation of 16 MB per thread is mostly RSS for nothing.
      // Measured with 1,000 running tasks (bench/running-rss): 153 MB, 149 MB with 4.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    // Emitted for the first threads (in a microtask, before any task) and for any replacement;
    // piscina's worker interface names the thread's id `id`.
    this.piscina.on('workerCreate', (worker: { id: number }) => {
      const channel = new BroadcastChannel(reportChannelName(worker.id));
      channel.onmessage = (event) => this.onReport((event as MessageEvent).data as ReportEnvelope);
      this.reportChannels.push(channel);
    });
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /** Starts `spec` on a worker; `onReport` gets each of its state changes in order. */
  dispatch(spec: TaskSpec, onReport: (message: ReportMessage) => void): DispatchedTask {
    const entry: Dispatched = { onReport, held: [] };
    this.dispatched.set(spec.runKey, entry);
    const outcome = this.piscina.run(spec).then(
      (result: TaskOutcome) => result,
      (error: Error) => {
        this.dispatched.delete(spec.runKey);
        return { ok: false, error: `worker thread failed: ${error.message}` };
      },
    );
    // On success the entry stays until the `released` report: the reports and piscina's answer
    // travel on different channels, so the answer may come first.
    const send = (message: ControlMessage) => {
      if (entry.held) entry.held.push(message);
      else this.control.postMessage({ runKey: spec.runKey, message });
    };
    return { send, outcome };
  }

  private onReport({ runKey, message }: ReportEnvelope): void {
    const entry = this.dispatched.get(runKey);
    if (!entry) return;
    if (message.type === 'accepted') {
      const held = entry.held ?? [];
      entry.held = null;
      for (const control of held) this.control.postMessage({ runKey, message: control });
      return;
    }
    if (message.type === 'released') this.dispatched.delete(runKey);
    entry.onReport(message);
  }

  async close(): Promise<void> {
    await this.piscina.close({ force: true });
    for (const channel of [...this.reportChannels, this.control]) channel.close();
  }
}
