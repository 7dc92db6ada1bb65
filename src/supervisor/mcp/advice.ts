// What the server tells an agent about a task's end, true for this daemon as configured: with a
// harness on --agent-socket the end reaches the agent as a todo; without one nothing announces
// it, so the agent is told how to wait for it (a long poll that returns as soon as the task ends).

export interface EndAdvice {
  /** A harness is on --agent-socket: every end of a task that outlived run's wait becomes a todo. */
  todos: boolean;
}

/** The server's instructions (initialize, server/discover). */
export function instructionsFor(advice: EndAdvice): string {
  const afterWait = advice.todos
    ? 'otherwise it keeps running and its end reaches you as a todo, so there is no need to poll.'
    : `otherwise it keeps running and nothing announces its end: ${WAITING}`;
  return [
    'Runs shell commands as background tasks. run starts one and returns its result if it finishes within wait_seconds;',
    afterWait,
    'status shows a task, output reads its output, kill stops it and everything it started, list shows what exists.',
    'Results leave out members that are null (and run and status those with nothing to say); verbose: true on run or status gives every member.',
  ].join(' ');
}

/** How to wait for a task's end without a harness. */
const WAITING =
  'to wait for it, call status with its id and wait_seconds (up to 30), which returns as soon as the task ends (call again while it still runs), or output with since and wait_seconds to read its output as it comes.';

/** The sentence of run's description on a task that outlives its wait. */
export function runEndAdvice(advice: EndAdvice): string {
  return advice.todos
    ? 'longer ones keep running, and their end reaches you as a todo, so do not poll with status.'
    : 'longer ones keep running: status with wait_seconds (up to 30) waits for the end and returns as soon as it comes.';
}

/** The sentence of status's description on waiting. */
export function statusEndAdvice(advice: EndAdvice): string {
  return advice.todos
    ? "A task's end reaches you as a todo, so use this to read a result or check progress, not to poll in a loop."
    : 'Nothing announces the end of a task: to wait for it, give wait_seconds (up to 30); the call returns as soon as the task ends (call again while it still runs).';
}

/** The sentence of kill's description on the end that follows. */
export function killEndAdvice(advice: EndAdvice): string {
  return advice.todos
    ? 'Returns at once; the end reaches you as a todo.'
    : 'Returns at once; status with wait_seconds waits for the end.';
}
