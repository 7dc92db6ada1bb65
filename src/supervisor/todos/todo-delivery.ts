// Delivers the todo outbox to the harness: sends queued operations oldest first, several in
// flight at once, matches each answer line to the oldest unanswered request, and removes an
// operation from the outbox only on an `ok`. Nothing here blocks a caller: the outbox is the queue.
import type { Logger } from 'pino';
import { parseAnswer } from '../../shared/todo-protocol.js';
import type { OutboxEntry, TodoOutbox } from '../registry/todo-outbox.js';
import { Backoff } from './backoff.js';
import { HarnessConnection } from './harness-connection.js';

/** Requests sent and not yet answered, at most. */
const WINDOW_REQUESTS = 64;
/** The oldest unanswered request waits this long before the connection is taken for dead. */
const ANSWER_TIMEOUT_MS = 30_000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 10_000;

export class TodoDelivery {
  private readonly connection: HarnessConnection;
  /** Sent on this connection and not yet answered, in the order sent (the order of the answers). */
  private inFlight: OutboxEntry[] = [];
  private readonly inFlightVersions = new Set<number>();
  /** The newest version sent on this connection (or skipped as in flight); a retry rewinds it. */
  private cursor = 0;
  private pumpScheduled = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private readonly retryBackoff = new Backoff(RETRY_MIN_MS, RETRY_MAX_MS);
  private answerTimer: NodeJS.Timeout | null = null;
  private readonly drained: Array<() => void> = [];

  constructor(
    private readonly outbox: TodoOutbox,
    socketPath: string,
    private readonly log: Logger,
  ) {
    this.connection = new HarnessConnection(
      socketPath,
      {
        onOpen: () => this.schedulePump(),
        onLine: (line) => this.onAnswer(line),
        onClose: () => this.forgetInFlight(),
      },
      log,
    );
    outbox.onEnqueued(() => this.schedulePump());
  }

  get connected(): boolean {
    return this.connection.connected;
  }

  start(): void {
    this.connection.start();
  }

  /** Resolves once the outbox is empty or `timeoutMs` has passed (for a stop that wants its last todos out). */
  async drain(timeoutMs: number): Promise<void> {
    if (this.outbox.depth() === 0 || !this.connected) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.drained.push(resolve);
      timer = setTimeout(resolve, timeoutMs);
    });
    clearTimeout(timer);
  }

  stop(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.answerTimer) clearTimeout(this.answerTimer);
    this.connection.stop();
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    // Deferred: an enqueue reports from inside its transaction, and many enqueues make one pump.
    // A microtask runs as soon as the transaction has committed, before any other I/O is served.
    queueMicrotask(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (this.connected && this.inFlight.length < WINDOW_REQUESTS) {
      const batch = this.outbox.listAfter(this.cursor, WINDOW_REQUESTS);
      if (batch.length === 0) return;
      for (const entry of batch) {
        this.cursor = entry.version;
        if (this.inFlightVersions.has(entry.version)) continue;
        if (!this.connection.send(entry.line)) return;
        if (this.inFlight.length === 0) this.armAnswerTimer();
        this.inFlight.push(entry);
        this.inFlightVersions.add(entry.version);
        if (this.inFlight.length >= WINDOW_REQUESTS) return;
      }
    }
  }

  private onAnswer(line: string): void {
    const entry = this.inFlight.shift();
    if (!entry) {
      this.log.warn({ line: line.slice(0, 200) }, 'the harness sent an answer to no request; ignored');
      return;
    }
    this.inFlightVersions.delete(entry.version);
    this.armAnswerTimer();
    const answer = parseAnswer(line);
    if (answer.ok) {
      this.outbox.acknowledge(entry);
      if (this.outbox.depth() === 0) this.onDrained();
    } else {
      const message = answer.malformed
        ? 'malformed answer from the harness; the todo will be sent again'
        : 'the harness refused a todo; it will be sent again';
      this.log.warn({ key: entry.key, error: answer.error }, message);
      this.scheduleRetry();
    }
    this.pump();
  }

  /** Sends again, after a backoff, what is still in the outbox and not in flight. */
  private scheduleRetry(): void {
    if (this.retryTimer) return;
    const delayMs = this.retryBackoff.next();
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.cursor = 0;
      this.pump();
    }, delayMs);
  }

  private onDrained(): void {
    this.retryBackoff.reset();
    for (const resolve of this.drained.splice(0)) resolve();
  }

  /** (Re)starts the wait for an answer to the oldest request in flight. */
  private armAnswerTimer(): void {
    if (this.answerTimer) clearTimeout(this.answerTimer);
    this.answerTimer = setTimeout(() => {
      this.answerTimer = null;
      if (this.inFlight.length > 0) this.connection.drop(`no answer for ${ANSWER_TIMEOUT_MS} ms`);
    }, ANSWER_TIMEOUT_MS).unref();
  }

  private forgetInFlight(): void {
    this.inFlight = [];
    this.inFlightVersions.clear();
    this.cursor = 0;
    if (this.answerTimer) clearTimeout(this.answerTimer);
    this.answerTimer = null;
  }
}
