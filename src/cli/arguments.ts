// Checks of a command's arguments: numbers of seconds, counts, task ids; each refusal says what is accepted.
import { UsageError } from './cli-error.js';

/** A number of seconds from `min` (exclusive when `above`) up to `max`. */
export function parseSeconds(
  flag: string,
  text: string | undefined,
  limits: { max?: number; zeroAllowed?: boolean } = {},
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  const max = limits.max ?? 31_536_000;
  const low = limits.zeroAllowed ? value >= 0 : value > 0;
  if (text.trim() === '' || !Number.isFinite(value) || !low || value > max) {
    const range = limits.zeroAllowed ? `from 0 to ${max}` : `above 0 and at most ${max}`;
    throw new UsageError(`${flag} must be a number of seconds ${range}; got ${JSON.stringify(text)}`);
  }
  return value;
}

/** A whole number from 1 (or 0 with `zeroAllowed`) to `max`. */
export function parseCount(
  flag: string,
  text: string | undefined,
  max: number,
  zeroAllowed = false,
): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < (zeroAllowed ? 0 : 1) || value > max) {
    throw new UsageError(
      `${flag} must be a whole number from ${zeroAllowed ? 0 : 1} to ${max}; got ${JSON.stringify(text)}`,
    );
  }
  return value;
}

/** The task ids given, at least one (or exactly one with `single`). */
export function requireIds(command: string, positionals: string[], single = false): string[] {
  if (positionals.length === 0)
    throw new UsageError(`give ${single ? 'a task id' : 'one or more task ids'} (hive-bash list shows them); got none`);
  if (single && positionals.length > 1)
    throw new UsageError(`${command} takes one task id; got ${positionals.length}: ${positionals.join(' ')}`);
  return positionals;
}

/** One of `accepted`, or a usage error naming them. */
export function parseChoice<T extends string>(
  flag: string,
  text: string | undefined,
  accepted: readonly T[],
): T | undefined {
  if (text === undefined) return undefined;
  if ((accepted as readonly string[]).includes(text)) return text as T;
  throw new UsageError(`${flag} must be one of ${accepted.join(', ')}; got ${JSON.stringify(text)}`);
}
