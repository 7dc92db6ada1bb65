// What the server tells an agent about a task's end, true for this daemon as configured and for the
// client that asks: with a harness on --agent-socket the end reaches the agent as a todo; a client
// that holds run as a task of the Tasks extension reports its end itself; a 2025 session's client
// that keeps its GET stream open hears it pushed (a channel event in Claude Code); the rest are told
// how to wait for it (a long poll that returns as soon as the task ends).

/** How a task's end reaches the agent of one client (reachOf), the harness aside. */
export type EndReach = 'task' | 'push' | 'wait';
export const END_REACHES: readonly EndReach[] = ['task', 'push', 'wait'];

export interface EndAdvice {
  /** A harness is on --agent-socket: every end of a task that outlived run's wait becomes a todo. */
  todos: boolean;
  /** What the asking client declared makes of the end; 'wait' unless told otherwise. */
  reach?: EndReach;
}

/** The server's instructions (initialize, server/discover). */
export function instructionsFor(advice: EndAdvice): string {
  return [
    'Runs shell commands as background tasks. run starts one and returns its result if it finishes within wait_seconds;',
    `otherwise it keeps running and ${AFTER_WAIT[kindOf(advice)]}`,
    'status shows a task, output reads its output, kill stops it and everything it started, list shows what exists.',
    'Results leave out members that are null (and run and status those with nothing to say); verbose: true on run or status gives every member.',
  ].join(' ');
}

type AdviceKind = 'todos' | EndReach;
const kindOf = (advice: EndAdvice): AdviceKind => (advice.todos ? 'todos' : (advice.reach ?? 'wait'));

/** How to wait for a task's end when nothing else tells of it. */
const WAITING =
  'to wait for it, call status with its id and wait_seconds (up to 30), which returns as soon as the task ends (call again while it still runs), or output with since and wait_seconds to read its output as it comes.';

const AFTER_WAIT: Record<AdviceKind, string> = {
  todos: 'its end reaches you as a todo, so there is no need to poll.',
  task: 'your client holds it as a task and tells you when it ends, so there is no need to poll.',
  push: `the daemon pushes its end to your client (Claude Code shows it as a <channel> event when started with channels on); if nothing reaches you, ${WAITING}`,
  wait: `nothing announces its end: ${WAITING}`,
};

/** The sentence of run's description on a task that outlives its wait. */
export function runEndAdvice(advice: EndAdvice): string {
  return RUN_END[kindOf(advice)];
}

const RUN_END: Record<AdviceKind, string> = {
  todos: 'longer ones keep running, and their end reaches you as a todo, so do not poll with status.',
  task: 'longer ones keep running as a task of your client, which tells you when it ends, so do not poll with status.',
  push: 'longer ones keep running and their end is pushed to your client; without it, status with wait_seconds (up to 30) waits for the end and returns as soon as it comes.',
  wait: 'longer ones keep running: status with wait_seconds (up to 30) waits for the end and returns as soon as it comes.',
};

/** The sentence of status's description on waiting. */
export function statusEndAdvice(advice: EndAdvice): string {
  return STATUS_END[kindOf(advice)];
}

const STATUS_END: Record<AdviceKind, string> = {
  todos: "A task's end reaches you as a todo, so use this to read a result or check progress, not to poll in a loop.",
  task: 'Your client tells you when a task it holds ends, so use this to read a result or check progress, not to poll in a loop.',
  push: "A task's end is pushed to your client; if nothing reaches you, give wait_seconds (up to 30) to wait for it: the call returns as soon as the task ends (call again while it still runs).",
  wait: 'Nothing announces the end of a task: to wait for it, give wait_seconds (up to 30); the call returns as soon as the task ends (call again while it still runs).',
};

/** The sentence of kill's description on the end that follows. */
export function killEndAdvice(advice: EndAdvice): string {
  return KILL_END[kindOf(advice)];
}

const KILL_END: Record<AdviceKind, string> = {
  todos: 'Returns at once; the end reaches you as a todo.',
  task: 'Returns at once; your client tells you the end of a task it holds.',
  push: 'Returns at once; the end is pushed to your client, or status with wait_seconds waits for it.',
  wait: 'Returns at once; status with wait_seconds waits for the end.',
};
