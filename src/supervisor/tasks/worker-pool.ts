// The piscina pool of task workers. Each task is one long-lived piscina task on a worker thread;
// the supervisor talks to it over a MessageChannel of its own.
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ControlMessage, ReportMessage, TaskOutcome, TaskSpec } from '../../workers/protocol.js';

const WORKER_URL = new URL('../../workers/task-worker-entry.cjs', import.meta.url);
/** Tasks are I/O-bound and mostly wait: one worker hosts many at once, so piscina never queues. */
const TASKS_PER_WORKER = 1_000_000;

export interface DispatchedTask {
  send(message: ControlMessage): void;
  /** Resolves when the worker lets go of the task; never rejects. */
  outcome: Promise<TaskOutcome>;
}

export class WorkerPool {
  private readonly piscina: Piscina;

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
    });
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /** Starts `spec` on a worker; `onReport` gets each of its state changes in order. */
  dispatch(spec: Omit<TaskSpec, 'port'>, onReport: (message: ReportMessage) => void): DispatchedTask {
    const { port1, port2 } = new MessageChannel();
    port1.on('message', onReport);
    const task: TaskSpec = { ...spec, port: port2 };
    const outcome = this.piscina
      .run(task, { transferList: [port2 as unknown as MessagePort] })
      .then(
        (result: TaskOutcome) => result,
        (error: Error) => {
          port1.close();
          return { ok: false, error: `worker thread failed: ${error.message}` };
        },
      );
    // On success the port is left open: the worker closes its end after its last report, and
    // closing ours here could drop reports still in flight on this channel.
    return { send: (message) => port1.postMessage(message), outcome };
  }

  async close(): Promise<void> {
    await this.piscina.close({ force: true });
  }
}
