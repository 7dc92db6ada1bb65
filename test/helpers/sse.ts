// A reader of a server-sent-event stream over real HTTP (a 2025 session's GET stream, a 2026-07-28
// subscriptions/listen response): its JSON-RPC messages as they come, and a wait for the one a test
// expects (an event, never a time).
import { request } from 'undici';

export interface SseStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Every message received so far, in order. */
  messages: any[];
  /** Resolves with the first message (of all, received or to come) that `match` accepts. */
  next(match: (message: any) => boolean, what: string): Promise<any>;
  /** Resolves once the server has ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens a stream with `method` (GET, or POST with `body`); resolves once its headers arrived. */
export async function openSse(
  url: string,
  headers: Record<string, string>,
  method: 'GET' | 'POST' = 'GET',
  body?: string,
): Promise<SseStream> {
  const controller = new AbortController();
  const res = await request(url, { method, headers, body, signal: controller.signal });
  const messages: any[] = [];
  const waiters: Array<() => void> = [];
  const ended = (async () => {
    let text = '';
    try {
      for await (const chunk of res.body) {
        text += chunk.toString();
        let cut: number;
        while ((cut = text.indexOf('\n\n')) >= 0) {
          const data = text
            .slice(0, cut)
            .split('\n')
            .filter((line) => line.startsWith('data: '))
            .map((line) => line.slice(6))
            .join('\n');
          text = text.slice(cut + 2);
          if (data !== '') messages.push(JSON.parse(data));
          for (const wake of waiters.splice(0)) wake();
        }
      }
    } catch {
      // aborted by close()
    }
    for (const wake of waiters.splice(0)) wake();
  })();
  let done = false;
  void ended.then(() => (done = true));
  const next = async (match: (message: any) => boolean, what: string) => {
    for (;;) {
      const found = messages.find(match);
      if (found !== undefined) return found;
      if (done) throw new Error(`the stream ended without ${what}; it carried ${JSON.stringify(messages)}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { status: res.statusCode, headers: res.headers, messages, next, ended, close: () => controller.abort() };
}
