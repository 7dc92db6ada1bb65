// Capped exponential backoff: the one retry delay of the todo path (reconnecting to the harness,
// and sending again what it refused).

export class Backoff {
  private failures = 0;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {}

  /** The delay before the next attempt; each call doubles the one after, up to the cap. */
  next(): number {
    return Math.min(this.maxMs, this.minMs * 2 ** this.failures++);
  }

  /** A success: the next failure starts again at the shortest delay. */
  reset(): void {
    this.failures = 0;
  }
}
