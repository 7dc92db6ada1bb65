// Work that runs one piece after another: each piece starts once the one before it has settled.
// For work done a slice at a time with the event loop turning between slices: pieces side by side
// would each run a slice in the same turn, and hold the loop as long as all of them together.

export class OneAtATime {
  private last: Promise<unknown> = Promise.resolve();

  /** Runs `work` once every piece given before it has settled; its result. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const leave = await this.enter();
    try {
      return await work();
    } finally {
      leave();
    }
  }

  /** Resolves once every piece given before has settled, to the function that ends this one. */
  async enter(): Promise<() => void> {
    let leave = () => {};
    const done = new Promise<void>((resolve) => (leave = resolve));
    const before = this.last;
    this.last = before.then(() => done);
    await before;
    return leave;
  }
}
