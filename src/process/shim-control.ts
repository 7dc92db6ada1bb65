// A shim's control socket held by a thread other than the worker that runs its task (the main
// thread): a forced kill goes to the shim from there at once, not after the worker's turn comes.
import { writeSync } from 'node:fs';
import { nativeAddon } from './native.js';
import { signalNumber, type KillSignal } from './signals.js';

/**
 * Writes the shim's `kill N` line to `fd` (a LeaderStart's controlFd). A shim already gone (EPIPE)
 * or a full socket (EAGAIN) is no failure: the worker sends its own line too.
 */
export function sendShimKill(fd: number, signal: KillSignal): void {
  try {
    writeSync(fd, `kill ${signalNumber(signal)}\n`);
  } catch {
    // see above
  }
}

/** Closes a control fd this thread owns. */
export function closeShimControl(fd: number): void {
  nativeAddon().close(fd);
}
