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
    `otherwise it keeps running and ${TEXTS[kindOf(advice)].afterWait}`,
    'status shows a task, output reads its output, kill stops it and everything it started, list shows what exists.',
    'Results leave out members that are null (and run and status those with nothing to say); verbose: true on run or status gives every member.',
  ].join(' ');
}

/** The sentence of run's description on a task that outlives its wait. */
export const runEndAdvice = (advice: EndAdvice): string => TEXTS[kindOf(advice)].run;
/** The sentence of status's description on waiting. */
export const statusEndAdvice = (advice: EndAdvice): string => TEXTS[kindOf(advice)].status;
/** The sentence of kill's description on the end that follows. */
export const killEndAdvice = (advice: EndAdvice): string => TEXTS[kindOf(advice)].kill;

type AdviceKind = 'todos' | EndReach;
const kindOf = (advice: EndAdvice): AdviceKind => (advice.todos ? 'todos' : (advice.reach ?? 'wait'));

/** How to wait for a task's end when nothing else tells of it. */
const WAITING =
  'to wait for it, call status with its id and wait_seconds (up to 30), which returns as soon as the task ends (call again while it still runs), or output with since and wait_seconds to read its output as it comes.';

/** What each text says of the end: the instructions after run's wait, and run's, status's and kill's sentences. */
const TEXTS: Record<AdviceKind, { afterWait: string; run: string; status: string; kill: string }> = {
  todos: {
    afterWait: 'its end reaches you as a todo, so there is no need to poll.',
    run: 'longer ones keep running, and their end reaches you as a todo, so do not poll with status.',
    status:
      "A task's end reaches you as a todo, so use this to read a result or check progress, not to poll in a loop.",
    kill: 'Returns at once; the end reaches you as a todo.',
  },
  task: {
    afterWait: 'your client holds it as a task and tells you when it ends, so there is no need to poll.',
    run: 'longer ones keep running as a task of your client, which tells you when it ends, so do not poll with status.',
    status:
      'Your client tells you when a task it holds ends, so use this to read a result or check progress, not to poll in a loop.',
    kill: 'Returns at once; your client tells you the end of a task it holds.',
  },
  push: {
    afterWait: `the daemon pushes its end to your client (Claude Code shows it as a <channel> event when started with channels on); if nothing reaches you, ${WAITING}`,
    run: 'longer ones keep running and their end is pushed to your client; without it, status with wait_seconds (up to 30) waits for the end and returns as soon as it comes.',
    status:
      "A task's end is pushed to your client; if nothing reaches you, give wait_seconds (up to 30) to wait for it: the call returns as soon as the task ends (call again while it still runs).",
    kill: 'Returns at once; the end is pushed to your client, or status with wait_seconds waits for it.',
  },
  wait: {
    afterWait: `nothing announces its end: ${WAITING}`,
    run: 'longer ones keep running: status with wait_seconds (up to 30) waits for the end and returns as soon as it comes.',
    status:
      'Nothing announces the end of a task: to wait for it, give wait_seconds (up to 30); the call returns as soon as the task ends (call again while it still runs).',
    kill: 'Returns at once; status with wait_seconds waits for the end.',
  },
};
