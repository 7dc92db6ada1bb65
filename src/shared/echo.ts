// How a client's value is shown in an error message: JSON, cut short, with its type, so that a
// refusal echoes what it refused without echoing a megabyte of it or walking a deep nest.

const ECHO_CHARS = 60;
/** How deep a value is shown before `...`: a deeply nested input must not cost a deep walk. */
const ECHO_DEPTH = 4;

/** Shows a client's value in a message: JSON, cut to a readable length, with its type. */
export function echoValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string' && value.length > ECHO_CHARS) {
    return `${JSON.stringify(value.slice(0, ECHO_CHARS))}... (string of ${value.length} characters)`;
  }
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  let shown = showShallow(value, ECHO_DEPTH);
  if (shown.length > ECHO_CHARS + 20) shown = `${shown.slice(0, ECHO_CHARS + 20)}...`;
  return `${shown} (${type})`;
}

/** JSON of `value` down to `depth` levels, with `...` below and at most a few entries per level. */
function showShallow(value: unknown, depth: number): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value === null || typeof value !== 'object') {
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  }
  if (depth === 0) return Array.isArray(value) ? '[...]' : '{...}';
  const entries = Array.isArray(value) ? value.slice(0, ECHO_CHARS) : Object.entries(value).slice(0, ECHO_CHARS);
  if (Array.isArray(value)) return `[${entries.map((item) => showShallow(item, depth - 1)).join(',')}]`;
  return `{${(entries as Array<[string, unknown]>).map(([key, item]) => `${JSON.stringify(key)}:${showShallow(item, depth - 1)}`).join(',')}}`;
}
