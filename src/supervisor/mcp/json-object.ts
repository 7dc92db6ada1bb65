// JSON values whose shape is not known yet: what a request's body, params or _meta are before they are checked.

/** A JSON object whose members are not known yet. */
export type Loose = Record<string, unknown>;

/** Whether `value` is a JSON object (not null, not an array). */
export const isObject = (value: unknown): value is Loose =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
