// The harness's todo socket protocol: JSON lines, one request a line, exactly one answer line per
// request, in order. The daemon's client and the reference harness both import this file.

export const TODO_SOURCE = 'bash';

export interface TodoUpsert {
  cmd: 'todo_upsert';
  source: string;
  key: string;
  state: string;
  /** One line, e.g. `bash task build-1 done: exit 0 after 12.3 s`. */
  summary: string;
  body: string;
  /** Unix time in ms of the state change the todo shows. */
  updated_at: number;
}

export interface TodoClear {
  cmd: 'todo_clear';
  source: string;
  key: string;
}

/** The harness's other verb; the daemon does not send it. */
export interface Wake {
  cmd: 'wake';
  from: string;
  body: string;
}

export type TodoRequest = TodoUpsert | TodoClear;
export type HarnessRequest = TodoRequest | Wake;

export type HarnessAnswer = { ok: true } | { ok: false; error: string };

/** What of a harness's error text is kept (it is logged at each refusal): a line's worth. */
const ERROR_KEPT = 200;

/** Reads one answer line; a line that is not an answer is reported as a failed one, with the reason. */
export function parseAnswer(line: string): HarnessAnswer & { malformed?: true } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return {
      ok: false,
      error: `malformed answer (not JSON): ${JSON.stringify(line.slice(0, ERROR_KEPT))}`,
      malformed: true,
    };
  }
  if (typeof value === 'object' && value !== null && 'ok' in value) {
    if (value.ok === true) return { ok: true };
    if (value.ok === false) {
      const error = 'error' in value && typeof value.error === 'string' ? value.error : '(no error text)';
      const cut = error.length > ERROR_KEPT ? `${error.slice(0, ERROR_KEPT)}... (${error.length} characters)` : error;
      return { ok: false, error: cut };
    }
  }
  return {
    ok: false,
    error: `malformed answer (expected {"ok":true} or {"ok":false,"error":"..."}): ${JSON.stringify(line.slice(0, ERROR_KEPT))}`,
    malformed: true,
  };
}

const isText = (value: unknown): value is string => typeof value === 'string';

/** Checks one request line as a harness receives it; throws an Error whose message says what is accepted. */
export function parseRequest(line: string): HarnessRequest {
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(
      `the request is not JSON: got ${JSON.stringify(line.slice(0, 200))}; send one JSON object per line`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error(`the request must be a JSON object; got ${JSON.stringify(line.slice(0, 200))}`);
  }
  const missing = (fields: string[]) => fields.filter((name) => !isText(value[name]));
  const check = (fields: string[]) => {
    const absent = missing(fields);
    if (absent.length > 0)
      throw new Error(
        `${String(value.cmd)} needs string fields ${fields.join(', ')}; missing or not a string: ${absent.join(', ')}`,
      );
  };
  switch (value.cmd) {
    case 'todo_upsert':
      check(['source', 'key', 'state', 'summary', 'body']);
      if (typeof value.updated_at !== 'number')
        throw new Error(`todo_upsert needs a number updated_at (unix ms); got ${JSON.stringify(value.updated_at)}`);
      return value as unknown as TodoUpsert;
    case 'todo_clear':
      check(['source', 'key']);
      return value as unknown as TodoClear;
    case 'wake':
      check(['from', 'body']);
      return value as unknown as Wake;
    default:
      throw new Error(`unknown cmd ${JSON.stringify(value.cmd)}; accepted: todo_upsert, todo_clear, wake`);
  }
}
