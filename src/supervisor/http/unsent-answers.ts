// Answers written and not yet taken by their clients: what a client that sends requests and never
// reads makes the daemon hold. node:http stops reading a connection whose answer has not drained,
// but keeps the answer itself, and answers of requests it had read already; ten sockets that never
// read held 3.2 GB. Past MAX_UNSENT_BYTES in all, the connections whose answers have waited
// longest are closed, their answers dropped, until the rest fit.
import type { ServerResponse } from 'node:http';

/** The bytes of answers not yet taken by their clients that the daemon holds at most, over every connection. */
export const MAX_UNSENT_BYTES = 32 * 1024 * 1024;

export class UnsentAnswers {
  /** Answers ended and not yet all with the kernel, oldest first. */
  private readonly waiting = new Set<ServerResponse>();
  private closedUnread = 0;

  constructor(private readonly maxBytes = MAX_UNSENT_BYTES) {}

  /** For /healthz: the bytes of answers not taken yet, and the connections closed because theirs were not. */
  counts(): { unsent_bytes: number; closed_unread: number } {
    return { unsent_bytes: this.unsentBytes(), closed_unread: this.closedUnread };
  }

  /**
   * An answer's writableLength is what it has buffered and, once its connection is writing it,
   * what that connection holds: each byte is counted once.
   */
  private unsentBytes(): number {
    let unsent = 0;
    for (const res of this.waiting) unsent += res.writableLength;
    return unsent;
  }

  /**
   * Called once `res` was answered (or its handler is done): an answer not yet all with the kernel
   * waits here until it is, or its connection closes; past the bound, the oldest go.
   */
  watch(res: ServerResponse): void {
    if (!res.writableEnded) {
      // Ended later (an answer sent after its handler returned): watched then.
      res.once('prefinish', () => this.watch(res));
      return;
    }
    if (res.writableFinished || res.destroyed || res.writableLength === 0 || this.waiting.has(res)) return;
    this.waiting.add(res);
    const forget = () => this.waiting.delete(res);
    res.once('finish', forget);
    res.once('close', forget);
    this.trim();
  }

  /** Closes the connections of the oldest answers until what waits fits the bound. */
  private trim(): void {
    let unsent = this.unsentBytes();
    for (const oldest of this.waiting) {
      if (unsent <= this.maxBytes) return;
      const socket = oldest.req.socket;
      for (const res of this.waiting) {
        if (res.req.socket !== socket) continue;
        unsent -= res.writableLength;
        this.waiting.delete(res);
      }
      this.closedUnread++;
      socket.destroy();
    }
  }
}
