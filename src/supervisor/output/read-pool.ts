// The reader threads: where a task's output is read and turned into text, and where grep and
// wait_for patterns run, so that nothing a task prints and no pattern holds the main thread
// (/healthz and every other call go on meanwhile). A job with a pattern has a budget of time; past
// it, the job is stopped with its thread (a regular expression cannot be interrupted otherwise) and
// the caller refuses the pattern. Pattern jobs take turns by client (pattern-turns.ts). The threads
// start at the first job and stop when idle.
import { createRequire } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { fileSize } from './growing-file.js';
import { MATCH_CHUNK_BYTES, type MatchChunkJob, type MatchChunkResult } from './line-match.js';
import type { OutputCursor } from './output-cursor.js';
import type { OutputAnswer, OutputQuery, OutputTask } from './output-read.js';
import { PatternTurns, type WaitingJob } from './pattern-turns.js';
import type { ReadJob, ReadResult } from './read-thread.js';

const ENTRY_URL = new URL('./read-thread-entry.cjs', import.meta.url);
/**
 * Two threads. Jobs with a pattern take one at most, so that a plain read (tail, head, since) never
 * waits behind patterns running to their budget; plain reads take either.
 */
const READ_THREADS = 2;
const PATTERN_THREADS = READ_THREADS - 1;
/**
 * An idle thread (about 10 MB of RSS) stops after this long: longer than an agent's longest wait
 * for new output (30 s), so that reading a task as it grows keeps its thread; a read after a
 * longer pause waits for a thread to start (0.1 s or more).
 */
const IDLE_STOP_MS = 60_000;

/**
 * What a job with a pattern may take on its thread: two seconds, and 2 µs for each byte it reads. Irregexp matches a byte in nanoseconds, and V8's linear engine, which takes
 * over a match that backtracks too much, in about 1 µs on ordinary patterns; (?:a+)+ repeated 140
 * times took 35 µs a byte on Node 20 and 9 on Node 26.
 */
const PATTERN_BUDGET_BASE_MS = 2000;
const PATTERN_BUDGET_NS_PER_BYTE = 2000;

/** A job with a pattern ran past its budget and was stopped. */
export class BudgetExceededError extends Error {
  constructor(
    readonly budgetMs: number,
    readonly bytes: number,
  ) {
    super(`the job ran past its budget of ${budgetMs} ms`);
  }

  /** The budget in words: `4097 ms (2 s, and 2 µs for each of the 1048576 bytes to read)`. */
  describe(): string {
    return `${this.budgetMs} ms (${PATTERN_BUDGET_BASE_MS / 1000} s, and ${PATTERN_BUDGET_NS_PER_BYTE / 1000} µs for each of the ${this.bytes} bytes to read)`;
  }
}

/** The turn that pattern jobs of callers not named share. */
const UNNAMED_CLIENT = 'unnamed';

export class ReadPool {
  private piscina: Piscina | null = null;
  private running = 0;
  private runningPatterns = 0;
  /**
   * Jobs waiting for a thread: plain reads first come first served, pattern jobs in their clients'
   * turns, the two kinds by age. A job's budget starts on its thread.
   */
  private readonly waitingReads: WaitingJob[] = [];
  private readonly patternTurns = new PatternTurns();
  private nextSeq = 0;

  /**
   * Reads `query.streams` of `task` from `cursor` (output-read.ts); with grep, within the pattern's
   * budget, in the turn of `client` (call-clients.ts; null, for a read without grep, names none:
   * its caller need not be looked up).
   */
  readOutput(
    task: OutputTask,
    cursor: OutputCursor,
    query: OutputQuery,
    restarted: boolean,
    client: string | null,
  ): Promise<OutputAnswer> {
    const bytes = query.streams.reduce(
      (sum, stream) => sum + Math.max(0, fileSize(task.paths[stream]) - cursor[stream].offset),
      0,
    );
    const job: ReadJob = { type: 'read', task, cursor, query, restarted };
    const pattern = query.grep === null ? null : { client: client ?? UNNAMED_CLIENT, bytes };
    return this.run(job, pattern) as Promise<OutputAnswer>;
  }

  /** Tests the lines of the next chunk of a file against a pattern (line-match.ts), within its budget, in the turn of `client`. */
  matchChunk(job: Omit<MatchChunkJob, 'type'>, client: string): Promise<MatchChunkResult> {
    const bytes = Math.min(MATCH_CHUNK_BYTES, Math.max(0, fileSize(job.path) - job.offset)) + job.carry.length;
    return this.run({ type: 'match', ...job }, { client, bytes }) as Promise<MatchChunkResult>;
  }

  /** Stops the threads (the daemon's stop). */
  async close(): Promise<void> {
    const piscina = this.piscina;
    this.piscina = null;
    await piscina?.destroy();
  }

  /** Runs `job` on a thread; with `pattern`, in its client's turn and stopped past the budget for its bytes. */
  private async run(job: ReadJob, pattern: { client: string; bytes: number } | null): Promise<ReadResult> {
    await this.freeThread(pattern?.client ?? null);
    try {
      if (pattern === null) return (await this.pool().run(job)) as ReadResult;
      return await this.runWithin(job, pattern.bytes);
    } finally {
      this.running--;
      if (pattern !== null) {
        this.runningPatterns--;
        this.patternTurns.ended(pattern.client);
      }
      this.startWaiting();
    }
  }

  /**
   * Runs a job with a pattern, stopped once it has run its budget on its thread: the clock starts
   * when the thread says the job started, so a thread's start (its modules loaded on a loaded
   * machine) never counts against a pattern.
   */
  private async runWithin(job: ReadJob, patternBytes: number): Promise<ReadResult> {
    const budgetMs = Math.round(PATTERN_BUDGET_BASE_MS + (patternBytes * PATTERN_BUDGET_NS_PER_BYTE) / 1e6);
    const stop = new AbortController();
    const { port1, port2 } = new MessageChannel();
    let timer: NodeJS.Timeout | undefined;
    port1.once('message', () => (timer = setTimeout(() => stop.abort(), budgetMs)));
    try {
      return (await this.pool().run(
        { ...job, started: port2 },
        { signal: stop.signal, transferList: [port2] },
      )) as ReadResult;
    } catch (error) {
      if (stop.signal.aborted) throw new BudgetExceededError(budgetMs, patternBytes);
      throw error;
    } finally {
      clearTimeout(timer);
      port1.close();
    }
  }

  /** Whether a job (with a pattern or not) may take a thread now. */
  private mayStart(pattern: boolean): boolean {
    return this.running < READ_THREADS && (!pattern || this.runningPatterns < PATTERN_THREADS);
  }

  private take(pattern: boolean): void {
    this.running++;
    if (pattern) this.runningPatterns++;
  }

  /** Waits for a thread: a plain read (`client` null) behind the reads waiting, a pattern job for its client's turn. */
  private freeThread(client: string | null): Promise<void> {
    return new Promise<void>((start) => {
      const job = { seq: this.nextSeq++, start };
      if (client === null) this.waitingReads.push(job);
      else this.patternTurns.wait(client, job);
      this.startWaiting();
    });
  }

  /** Gives freed threads to the jobs waiting, the older kind first: a read, or the pattern job whose turn it is. */
  private startWaiting(): void {
    while (this.running < READ_THREADS) {
      const read = this.waitingReads[0];
      const patternFirst = this.mayStart(true) && this.patternTurns.oldestSeq() < (read?.seq ?? Infinity);
      const job = patternFirst ? this.patternTurns.next() : this.waitingReads.shift();
      if (job === undefined || job === null) return;
      this.take(patternFirst);
      job.start();
    }
  }

  /** The threads, made at the first job (piscina is required then: a daemon that reads nothing does not load it here). */
  private pool(): Piscina {
    if (this.piscina !== null) return this.piscina;
    const { Piscina: Pool } = createRequire(import.meta.url)('piscina') as typeof import('piscina');
    this.piscina = new Pool({
      filename: ENTRY_URL.href,
      minThreads: 0,
      maxThreads: READ_THREADS,
      idleTimeout: IDLE_STOP_MS,
    });
    return this.piscina;
  }
}
