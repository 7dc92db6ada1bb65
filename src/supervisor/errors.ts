// Errors a client can cause. Each has a stable code; its message names the input, echoes it and
// says what would be accepted. Tool handlers turn them into tool results with isError set.

export class ToolInputError extends Error {
  readonly code: string = 'ERR_INVALID_INPUT';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

export class UnknownTaskError extends ToolInputError {
  override readonly code = 'ERR_UNKNOWN_TASK';
  constructor(id: string) {
    super(`"id" names no task: got ${JSON.stringify(id)}; call list to see the ids of known tasks`);
  }
}

export class NameBusyError extends ToolInputError {
  override readonly code = 'ERR_NAME_BUSY';
  constructor(name: string, state: string) {
    super(`"name" is taken: got ${JSON.stringify(name)}, whose task is still ${state}; choose another name, or wait for it to finish or kill it first`);
  }
}

export class QueueFullError extends ToolInputError {
  override readonly code = 'ERR_QUEUE_FULL';
  constructor(maxPending: number) {
    super(`the pending queue is full (${maxPending} tasks, --max-pending); nothing was started: wait for tasks to finish or kill some, then call run again`);
  }
}

export class InputRefusedError extends ToolInputError {
  override readonly code = 'ERR_INPUT_REFUSED';
  constructor(task: { id: string }, why: string) {
    super(`input to task ${JSON.stringify(task.id)} refused: ${why}`);
  }
}

const ECHO_CHARS = 60;

/** Shows a client's value in a message: JSON, cut to a readable length, with its type. */
export function echoValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string' && value.length > ECHO_CHARS) {
    return `${JSON.stringify(value.slice(0, ECHO_CHARS))}... (string of ${value.length} characters)`;
  }
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  if (shown.length > ECHO_CHARS + 20) shown = `${shown.slice(0, ECHO_CHARS + 20)}...`;
  return `${shown} (${type})`;
}
