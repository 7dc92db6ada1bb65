// Prunes finished tasks, records and files, beyond the retention age and count: a batch at a time,
// the event loop turning between batches, so that a start over a large registry, or a burst of ends
// past the count, never holds the main thread for long.
import type { TaskStore } from '../registry/task-store.js';
import type { OutputFiles } from '../output/output-files.js';

const DAY_MS = 86_400_000;
const PRUNE_INTERVAL_MS = 60_000;
/**
 * Finished tasks deleted in one transaction at most: deleting a row reads its command to free its
 * pages (up to 256 KiB each), and 1,000 such rows took 383 ms in one go.
 */
const PRUNE_BATCH_ROWS = 32;

export class Retention {
  private finished: number;
  private readonly timer: NodeJS.Timeout;
  /** A batch is queued for a later turn of the event loop. */
  private queued: NodeJS.Immediate | null = null;

  constructor(
    private readonly store: TaskStore,
    private readonly files: OutputFiles,
    private readonly days: number,
    private readonly count: number,
  ) {
    this.finished = store.countFinished();
    this.queuePrune();
    this.timer = setInterval(() => this.queuePrune(), PRUNE_INTERVAL_MS).unref();
  }

  /**
   * Counts a newly finished task; past the limit the oldest finished go. At the limit (a
   * long-lived daemon's usual state) that is every task's end, so it reads only the rows it
   * deletes; the age limit is applied by the periodic prune.
   */
  noteFinished(): void {
    if (++this.finished <= this.count || this.store.storageFault !== null) return;
    const ids = this.store.pruneOldest(Math.min(this.finished - this.count, PRUNE_BATCH_ROWS));
    this.removeFiles(ids);
    this.finished -= ids.length;
    if (this.finished > this.count) this.queuePrune();
  }

  /** A finished task's record was replaced by a new run of its name: one finished task fewer. */
  noteReplaced(): void {
    this.finished--;
  }

  /** Prunes a batch on the next turn of the event loop, and batch after batch while a whole one went. */
  private queuePrune(): void {
    this.queued ??= setImmediate(() => {
      this.queued = null;
      if (this.prune() === PRUNE_BATCH_ROWS) this.queuePrune();
    });
  }

  /** Deletes a batch of what is past the age or the count; how many went. */
  private prune(): number {
    if (this.store.storageFault !== null) return 0; // pruned once the disk takes writes again
    const ids = this.store.prune(Date.now() - this.days * DAY_MS, this.count, PRUNE_BATCH_ROWS);
    this.removeFiles(ids);
    this.finished = this.store.countFinished();
    return ids.length;
  }

  private removeFiles(ids: string[]): void {
    for (const id of ids) this.files.remove(id);
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.queued !== null) clearImmediate(this.queued);
    this.queued = null;
  }
}
