// A wait bounded by a time: a promise's value, or a fallback once the time has passed. A plain timer,
// cleared as soon as the promise settles: an abortable sleep costs an AbortController and the
// AbortError it rejects with, on waits that sit on every task's path.

/** `promise`'s value, or `fallback` if `ms` pass before it settles (a rejection is passed on). */
export function withTimeout<T, F>(promise: Promise<T>, ms: number, fallback: F): Promise<T | F> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<F>((resolve) => (timer = setTimeout(resolve, ms, fallback)));
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer));
}
