// Screens drawn at once take turns: one terminal draws at a time, for a turn of about 10 ms, and
// every turn starts from setImmediate, after I/O is polled (a feed's turns one after another too,
// so that a file is never filtered in one step), so that 32 screens asked at once hold the main
// thread no longer at a stretch than one does. Without it each terminal's emulator ran its own
// 12 ms loop from its own timer, and all of them ran in one pass of the event loop: 32 costly
// screens held /healthz 1.7 s, 64 up to 15 s. Turns are taken in the order asked, so screens
// asked together draw in round robin.

export class DrawingTurns {
  private busy = false;
  private readonly waiting: Array<() => void> = [];

  /** Runs `work` after I/O once no other drawing is under way, then hands the next turn over. */
  async take<T>(work: () => T | Promise<T>): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else {
      this.busy = true;
      await new Promise(setImmediate);
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next === undefined) this.busy = false;
      else setImmediate(next); // still busy: the turn is the next one's, once I/O is polled
    }
  }
}
