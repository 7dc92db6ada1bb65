// The piscina pool of task workers. Each task is one long-lived piscina task on a worker thread;
// its reports come, and its control messages go, on its thread's MessagePort, addressed by the
// task's run key.
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type {
  AttachTask,
  ControlMessage,
  ReportEnvelope,
  ReportMessage,
  TaskOutcome,
  TaskSpec,
} from '../../workers/protocol.js';

const WORKER_URL = new URL('../../workers/task-worker-entry.cjs', import.meta.url);
/** Tasks are I/O-bound and mostly wait: one worker hosts many at once, so piscina never queues. */
const TASKS_PER_WORKER = 1_000_000;

/** What a dispatched task tells the supervisor: its worker's reports, or that its worker failed (nothing follows). */
export type PoolReport =
  Exclude<ReportMessage, { type: 'ended-and-released' }> | { type: 'worker-failed'; error: string };

export interface DispatchedTask {
  send(message: ControlMessage): void;
}

interface Dispatched {
  onReport: (message: PoolReport) => void;
  /** The port of the thread running it, known from its `accepted` report; until then control is queued. */
  port: MessagePort | null;
  queued: ControlMessage[];
}

/** Attempts at giving a new thread its port before giving up (each lands on the least busy thread). */
const ATTACH_ATTEMPTS = 20;
const ATTACH_RETRY_MS = 20;

export class WorkerPool {
  private readonly piscina: Piscina;
  private readonly dispatched = new Map<string, Dispatched>();
  /** The supervisor's end of each thread's port. */
  private readonly ports = new Set<MessagePort>();
  private closing = false;

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
    // Emitted for the first threads (in a microtask, before any task) and for any replacement.
    this.piscina.on('workerCreate', () => this.attach(0));
  }

  /** Gives a thread without a port its port: an attach task, held there for the thread's life. */
  private attach(attempt: number): void {
    if (this.closing) return;
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (envelope: ReportEnvelope) => this.onReport(envelope, port1));
    port1.once('close', () => this.ports.delete(port1));
    this.ports.add(port1);
    const task: AttachTask = { attach: port2 };
    void this.piscina.run(task, { transferList: [port2] }).then(
      (outcome: TaskOutcome) => {
        if (outcome.ok) return;
        // It reached a thread that had a port: that one is busier now, so the next goes elsewhere.
        port1.close();
        if (attempt + 1 < ATTACH_ATTEMPTS) setTimeout(() => this.attach(attempt + 1), ATTACH_RETRY_MS).unref();
      },
      () => port1.close(), // the thread died; its replacement gets an attach of its own
    );
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  /**
   * Starts `spec` on a worker; `onReport` gets each of its state changes in order, the last being
   * `released`, or `worker-failed` when the worker's run failed.
   */
  dispatch(spec: TaskSpec, onReport: (message: PoolReport) => void): DispatchedTask {
    const entry: Dispatched = { onReport, port: null, queued: [] };
    this.dispatched.set(spec.runKey, entry);
    // A successful run's answer says nothing its `released` report has not (the two travel on
    // different channels, so the answer may even come first): only a failure is read here.
    const failed = (error: string) => {
      if (this.dispatched.get(spec.runKey) !== entry) return;
      this.dispatched.delete(spec.runKey);
      onReport({ type: 'worker-failed', error });
    };
    void this.piscina.run(spec).then(
      (result: TaskOutcome) => (result.ok ? undefined : failed(result.error ?? 'the worker failed')),
      (error: Error) => failed(`worker thread failed: ${error.message}`),
    );
    const send = (message: ControlMessage) => {
      if (entry.port) entry.port.postMessage({ runKey: spec.runKey, message });
      else entry.queued.push(message);
    };
    return { send };
  }

  private onReport({ runKey, message }: ReportEnvelope, port: MessagePort): void {
    const entry = this.dispatched.get(runKey);
    if (!entry) return;
    if (message.type === 'accepted') {
      entry.port = port;
      for (const control of entry.queued.splice(0)) port.postMessage({ runKey, message: control });
      return;
    }
    if (message.type === 'released' || message.type === 'ended-and-released') this.dispatched.delete(runKey);
    if (message.type !== 'ended-and-released') return entry.onReport(message);
    entry.onReport(message.ended);
    entry.onReport(message.released);
  }

  /** At the daemon's stop, once its tasks were ended: the threads go at once (their attach tasks never end). */
  async close(): Promise<void> {
    this.closing = true;
    for (const port of this.ports) port.close();
    await this.piscina.destroy();
  }
}
