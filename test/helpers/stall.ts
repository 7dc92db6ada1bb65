// Whether the daemon's main thread stays free while a costly call runs: /healthz asked one request
// after another for as long as the call is in flight. A stalled main thread answers none of them
// until the call is over; a free one answers many. Proven by order (answers that came before the
// call's own), never by a time limit; the latencies are returned for the record.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';

export interface HealthDuring<T> {
  /** What the costly call resolved to (or the error it rejected with). */
  outcome: { value: T } | { error: unknown };
  /** How long the costly call took, ms. */
  callMs: number;
  /** The latency of each /healthz answered while the call was still in flight, ms. */
  answered: number[];
}

/** Asks `${origin}/healthz` back to back while `call` runs; each answer counts if it came before the call settled. */
export async function healthzDuring<T>(origin: string, call: () => Promise<T>): Promise<HealthDuring<T>> {
  let settled = false;
  const answered: number[] = [];
  const started = performance.now();
  const running = call().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  void running.then(() => (settled = true));
  const asking = (async () => {
    while (!settled) {
      const sent = performance.now();
      const response = await fetch(`${origin}/healthz`);
      await response.arrayBuffer();
      if (!settled) answered.push(performance.now() - sent);
    }
  })();
  const outcome = await running;
  const callMs = performance.now() - started;
  await asking;
  return { outcome, callMs, answered };
}

/** Latencies of `count` /healthz asked one after another with nothing else running: the baseline. */
export async function healthzBaseline(origin: string, count = 20): Promise<number[]> {
  const latencies: number[] = [];
  for (let index = 0; index < count; index++) {
    const sent = performance.now();
    await (await fetch(`${origin}/healthz`)).arrayBuffer();
    latencies.push(performance.now() - sent);
  }
  return latencies;
}

/** `{median, max}` of latencies, rounded to 0.1 ms. */
export function latencyFigures(latencies: number[]): { count: number; median: number; max: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  const round = (value: number) => Math.round(value * 10) / 10;
  return {
    count: sorted.length,
    median: round(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN),
    max: round(sorted.at(-1) ?? Number.NaN),
  };
}

/** /healthz answers, before the costly call's own, that show the main thread was free. */
const MIN_ANSWERED = 3;

/**
 * Runs `call` (`what`, for the message) with /healthz asked meanwhile; fails unless /healthz
 * answered at least three times before the call did. Returns its value and the figures measured.
 */
export async function servedMeanwhile<T>(
  origin: string,
  what: string,
  call: () => Promise<T>,
): Promise<{ value: T; figures: { call_ms: number; healthz_ms: ReturnType<typeof latencyFigures> } }> {
  const during = await healthzDuring(origin, call);
  if ('error' in during.outcome) throw during.outcome.error;
  assert.ok(
    during.answered.length >= MIN_ANSWERED,
    `/healthz answered ${during.answered.length} times while ${what} ran ${Math.round(during.callMs)} ms`,
  );
  return {
    value: during.outcome.value,
    figures: { call_ms: Math.round(during.callMs), healthz_ms: latencyFigures(during.answered) },
  };
}

/** A /healthz asked every few ms in the background; stop() gives what was measured. */
export function watchHealthz(origin: string): { stop(): Promise<{ failures: string[]; latencies: number[] }> } {
  let stopped = false;
  const failures: string[] = [];
  const latencies: number[] = [];
  const asking = (async () => {
    while (!stopped) {
      const sent = performance.now();
      try {
        const response = await fetch(`${origin}/healthz`);
        const body = (await response.json()) as { ok?: boolean };
        if (response.status !== 200 || body.ok !== true) failures.push(`${response.status} ${JSON.stringify(body)}`);
      } catch (error) {
        failures.push(String(error));
      }
      latencies.push(performance.now() - sent);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await asking;
      return { failures, latencies };
    },
  };
}

/**
 * A pattern that runs past its budget on the output of its command (400 lines of 2,000 a's and a
 * b: none matches): a grep of it is refused after about 3.6 s of a reader thread (2 s, and 2 µs
 * for each of the 800,800 bytes). V8's linear engine took 390 µs a byte of it on Node 20 here and
 * 30 µs on Node 26, whose engine is faster: 24 s in all, nearly 7 times the budget.
 * `(?:a+)+` repeated 140 times, used before, took 9 µs a byte on Node 26, and a grep of 200 such
 * lines finished within its budget on a quicker machine.
 */
export const COSTLY_GREP = {
  command: `awk 'BEGIN { line = sprintf("%2000s", ""); gsub(/ /, "a", line); for (i = 0; i < 400; i++) print line "b" }'`,
  pattern: `${'(a*)*'.repeat(195)}a$`,
};
