// Prunes finished tasks, records and files, beyond the retention age and count.
import type { TaskStore } from '../registry/task-store.js';
import type { OutputFiles } from '../output/output-files.js';

const DAY_MS = 86_400_000;
const PRUNE_INTERVAL_MS = 60_000;

export class Retention {
  private finished: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: TaskStore,
    private readonly files: OutputFiles,
    private readonly days: number,
    private readonly count: number,
  ) {
    this.finished = store.countFinished();
    this.prune();
    this.timer = setInterval(() => this.prune(), PRUNE_INTERVAL_MS).unref();
  }

  /**
   * Counts a newly finished task; past the limit the oldest finished go at once. At the limit
   * (a long-lived daemon's usual state) that is every task's end, so it reads only the rows it
   * deletes; the age limit is applied by the periodic prune.
   */
  noteFinished(): void {
    if (++this.finished <= this.count || this.store.storageFault !== null) return;
    const ids = this.store.pruneOldest(this.finished - this.count);
    this.removeFiles(ids);
    this.finished -= ids.length;
  }

  /** A finished task's record was replaced by a new run of its name: one finished task fewer. */
  noteReplaced(): void {
    this.finished--;
  }

  prune(): string[] {
    if (this.store.storageFault !== null) return []; // pruned once the disk takes writes again
    const ids = this.store.prune(Date.now() - this.days * DAY_MS, this.count);
    this.removeFiles(ids);
    this.finished = this.store.countFinished();
    return ids;
  }

  private removeFiles(ids: string[]): void {
    for (const id of ids) this.files.remove(id);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
