// The piscina pool of task workers. Each task is one long-lived piscina task on a worker thread;
// its reports come, and its control messages go, on its thread's MessagePort, addressed by the
// task's run key. The threads stop once no task has been on them, and no MCP request has come, for
// a while; the next request or task starts them again: an idle daemon does not pay for them.
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { MessageChannel, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import type {
  PortHandshake,
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

/**
 * How long the threads stay with no task on them and no MCP request before they stop (the next
 * request or task starts them again). A task that waits for their start pays it: a fresh daemon's
 * first run took 630 to 710 ms against 280 to 360 ms with the threads up, at a load average of 25.
 */
export const IDLE_STOP_MS = 60_000;

/**
 * The pool's threads: a core is left to the main thread, the others get a thread each, up to 4
 * (at least one). A task costs the threads little CPU (a pipe task's output goes from its shim to
 * its files): on 2 cores, one thread ran the short-tasks row as fast as two and held 12 to 15 MB
 * less on the running-rss row with 100 tasks running.
 */
export const poolThreads = (cores = availableParallelism()): number => Math.min(4, Math.max(1, cores - 1));

/** One start of the pool: its threads and the supervisor's end of each thread's port. */
interface Started {
  piscina: Piscina;
  ports: Set<MessagePort>;
}

export class WorkerPool {
  private started: Started | null = null;
  private readonly dispatched = new Map<string, Dispatched>();
  private idleTimer: NodeJS.Timeout | null = null;
  private closing = false;

  /** The threads start at once (the daemon's first task is likely near), and stop if none comes. */
  constructor(private readonly idleStopMs = IDLE_STOP_MS) {
    this.warm();
  }

  /** The pool, started at its first use (piscina is required then: an idle daemon does not load it). */
  private start(): Started {
    if (this.started !== null) return this.started;
    const { Piscina: Pool } = createRequire(import.meta.url)('piscina') as typeof import('piscina');
    const threads = poolThreads();
    const piscina = new Pool({
      filename: WORKER_URL.href,
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Infinity,
      concurrentTasksPerWorker: TASKS_PER_WORKER,
      // 'sync' parks an idle worker in Atomics.wait, which would freeze the tasks it still hosts.
      atomics: 'disabled',
      // A worker's garbage is small and short-lived (a task's reports, output chunk wrappers);
      // V8's default young generation of 16 MB per thread is mostly RSS for nothing.
      // Measured with 1,000 running tasks (bench/running-rss): 153 MB, 149 MB with 4. A
      // --max-semi-space-size on Node's command line (HEAP_FLAGS, heap-flags.ts) overrides it.
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    const started: Started = { piscina, ports: new Set() };
    // Emitted for the first threads (in a microtask, before any task) and for any replacement.
    piscina.on('workerCreate', () => this.attach(started, 0));
    this.started = started;
    return started;
  }

  /** Starts the threads unless they run, and keeps them for `idleStopMs` more (a request came: a run may follow). */
  warm(): void {
    if (this.closing) return;
    this.start();
    this.armIdleStop();
  }

  /** Once no task has been on the threads, and nothing warmed them, for `idleStopMs`, they stop. */
  private armIdleStop(): void {
    if (this.dispatched.size > 0 || this.started === null) return;
    if (this.idleTimer !== null) this.idleTimer.refresh();
    else this.idleTimer = setTimeout(() => this.stopIdle(), this.idleStopMs).unref();
  }

  private stopIdle(): void {
    this.idleTimer = null;
    if (this.dispatched.size > 0 || this.started === null) return;
    const { piscina, ports } = this.started;
    this.started = null;
    for (const port of ports) port.close();
    void piscina.destroy();
  }

  /** Gives a thread without a port its port: a port handshake, held there for the thread's life. */
  private attach(started: Started, attempt: number): void {
    if (this.closing || this.started !== started) return;
    const { port1, port2 } = new MessageChannel();
    port1.on('message', (envelope: ReportEnvelope) => this.onReport(envelope, port1));
    port1.once('close', () => started.ports.delete(port1));
    started.ports.add(port1);
    const handshake: PortHandshake = { attach: port2 };
    void started.piscina.run(handshake, { transferList: [port2] }).then(
      (outcome: TaskOutcome) => {
        if (outcome.ok) return;
        // It reached a thread that had a port: that one is busier now, so the next goes elsewhere.
        port1.close();
        if (attempt + 1 < ATTACH_ATTEMPTS) setTimeout(() => this.attach(started, attempt + 1), ATTACH_RETRY_MS).unref();
      },
      () => port1.close(), // the thread died; its replacement gets a handshake of its own
    );
  }

  get threads(): number {
    return this.started?.piscina.threads.length ?? 0;
  }

  /**
   * Starts `spec` on a worker; `onReport` gets each of its state changes in order, the last being
   * `released`, or `worker-failed` when the worker's run failed.
   */
  dispatch(spec: TaskSpec, onReport: (message: PoolReport) => void): DispatchedTask {
    // Not `spec` in what outlives this call: its `env` and `stdin` may be megabytes, and a task may run for days.
    const { runKey } = spec;
    const entry: Dispatched = { onReport, port: null, queued: [] };
    this.dispatched.set(runKey, entry);
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    // A successful run's answer says nothing its `released` report has not (the two travel on
    // different channels, so the answer may even come first): only a failure is read here.
    const failed = (error: string) => {
      if (this.dispatched.get(runKey) !== entry) return;
      this.dispatched.delete(runKey);
      this.armIdleStop();
      onReport({ type: 'worker-failed', error });
    };
    void this.start()
      .piscina.run(spec)
      .then(
        (result: TaskOutcome) => (result.ok ? undefined : failed(result.error ?? 'the worker failed')),
        (error: Error) => failed(`worker thread failed: ${error.message}`),
      );
    const send = (message: ControlMessage) => {
      if (entry.port) entry.port.postMessage({ runKey, message });
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
    if (message.type === 'released' || message.type === 'ended-and-released') {
      this.dispatched.delete(runKey);
      this.armIdleStop();
    }
    if (message.type !== 'ended-and-released') return entry.onReport(message);
    entry.onReport(message.ended);
    entry.onReport(message.released);
  }

  /** At the daemon's stop, once its tasks were ended: the threads go at once (their port handshakes never end). */
  async close(): Promise<void> {
    this.closing = true;
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    for (const port of this.started?.ports ?? []) port.close();
    await this.started?.piscina.destroy();
  }
}
