// The one table of signal names and numbers (the OS's own, from os.constants.signals), the
// signals a kill may start with, and a shell's view of a signalled exit.
import { constants as osConstants } from 'node:os';

/** The signals a kill may start with; SIGKILL ends it at once. */
export const KILL_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGKILL'] as const;
export type KillSignal = (typeof KILL_SIGNALS)[number];

const NAMES = new Map<number, string>();
for (const [name, number] of Object.entries(osConstants.signals)) if (!NAMES.has(number)) NAMES.set(number, name);

/** The number of signal `name` on this OS. */
export function signalNumber(name: KillSignal): number {
  return osConstants.signals[name];
}

/** The name of signal `number` (SIGKILL for 9 on Linux), or null for a number the OS does not name. */
export function signalName(number: number): string | null {
  return NAMES.get(number) ?? null;
}

/** A shell's exit code for a process ended by signal `number`: 128 + N. */
export function exitCodeOfSignal(number: number): number {
  return 128 + number;
}
