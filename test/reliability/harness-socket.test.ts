// The harness at its worst while many tasks end: its socket goes away and comes back, it answers
// slowly, and it refuses with ok:false, in turns, all through the run. Once it has been sent every
// final state at least once it recovers, and every final state must then reach it, with no todo
// left showing a task as running. (It must recover: its turns go by request count, so a last todo
// retried alone, every 10 s at the daemon's longest backoff, could meet up to PHASE_REQUESTS
// refusals in a row: 299 of 300 were delivered in two minutes once, in CI.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batterySize, healthz, RawSession, report } from '../helpers/battery.js';
import { OK, startDaemonWithPeer, type PeerRequest } from '../helpers/harness-peer.js';
import { waitFor } from '../helpers/processes.js';

const TASKS = batterySize(300, 1000);
/** The harness changes behaviour every this many requests: slow, then refusing, then well. */
const PHASE_REQUESTS = 40;
const SLOW_ANSWER_MS = 15;
/** And its socket goes away after every this many requests, until the daemon notices. */
const FLAP_REQUESTS = 150;
const FINISHED = new Set(['done', 'timed_out', 'killed', 'interrupted']);

const kind = (i: number) => (i % 10 === 0 ? 'killed' : i % 10 === 1 ? 'timed_out' : 'done');

test(`${TASKS} tasks ending while the harness flaps, answers slowly and refuses with ok:false have every final state delivered once it recovers, none left running`, async (t) => {
  const began = Date.now();
  const behaviour = { slow: 0, refused: 0, ok: 0 };
  let answered = 0;
  let recovered = false;
  const answers = new Map<PeerRequest, string>();
  const answer = async (request: PeerRequest) => {
    const given = await answerAtWorst();
    answers.set(request, given);
    return given;
  };
  const answerAtWorst = async () => {
    if (recovered) return OK;
    const phase = Math.floor(answered++ / PHASE_REQUESTS) % 3;
    if (phase === 0) {
      behaviour.slow++;
      await new Promise((resolve) => setTimeout(resolve, SLOW_ANSWER_MS));
      return OK;
    }
    if (phase === 1) {
      behaviour.refused++;
      return '{"ok":false,"error":"the board is busy"}';
    }
    behaviour.ok++;
    return OK;
  };
  const { peer, daemon } = await startDaemonWithPeer(t, {
    answer,
    args: ['--max-running', '32', '--kill-grace-ms', '200', '--retention-count', '100000'],
  });
  const connected = async () => (await healthz(daemon.origin)).todos.harness_connected as boolean;

  // The flapping: once FLAP_REQUESTS more have arrived, the socket goes away (what was unanswered
  // stays so) until the daemon has seen it go, then comes back on the same path. It stops once the
  // harness has recovered (with the socket back) or the test ends (failed: left down).
  let flaps = 0;
  let ending = false;
  let flapError: Error | null = null;
  const flapping = (async () => {
    for (let next = FLAP_REQUESTS; !recovered && !ending; next = peer.received.length + FLAP_REQUESTS) {
      const flap = await waitFor(() => recovered || ending || peer.received.length >= next, 120_000, 10);
      if (!flap || recovered || ending) return;
      await peer.stop();
      await waitFor(async () => ending || !(await connected()), 30_000);
      if (ending) return;
      await peer.start();
      flaps++;
    }
  })().catch((error: Error) => {
    flapError = error;
  });
  // Also when the test fails: the flapping ends before the peer is taken down for good.
  t.after(async () => {
    ending = true;
    await flapping;
    await peer.stop();
  });

  const session = await RawSession.open(daemon.url);
  const calls = Array.from({ length: TASKS }, (_, i) => {
    if (kind(i) === 'done') return { command: `echo "task ${i}"; exit $((${i} % 5))`, wait_seconds: 0 };
    return { command: 'sleep 30', wait_seconds: 0, ...(kind(i) === 'timed_out' ? { timeout_seconds: 0.2 } : {}) };
  });
  const started = await session.all('run', calls);
  const ids: string[] = started.map((task) => task.id);
  await session.all(
    'kill',
    ids.filter((_, i) => kind(i) === 'killed').map((id) => ({ id })),
  );

  let views: any[] = [];
  const allEnded = await waitFor(
    async () => {
      views = await session.all(
        'status',
        ids.map((id) => ({ id, peek: true })),
      );
      return views.every((view) => FINISHED.has(view.state));
    },
    120_000,
    250,
  );
  assert.ok(allEnded, `${views.filter((view) => FINISHED.has(view.state)).length} of ${TASKS} ended`);
  const endedAt = Date.now();
  const flapsWhileEnding = flaps;
  views.forEach((view, i) => assert.equal(view.state, kind(i), `${view.id} ended as it should`));

  const sentOnce = (view: any) => peer.requestsFor(view.id).some((request) => request.state === view.state);
  assert.ok(await waitFor(() => views.every(sentOnce), 120_000, 50), 'every final state was sent to the harness');
  const worstUntil = Date.now();
  recovered = true;
  await flapping;
  assert.equal(flapError, null, 'the harness flapped as planned');
  const undelivered = () => views.filter((view) => peer.todos.get(view.id)?.state !== view.state);
  // The daemon's retry (at most 10 s away) and reconnection (at most 5 s) bring them all.
  const allDelivered = await waitFor(() => undelivered().length === 0, 60_000, 50);
  const missing = undelivered().map((view) => ({
    id: view.id,
    state: view.state,
    requests: peer.requestsFor(view.id).map((request) => `${request.state} ${answers.get(request) ?? 'unanswered'}`),
  }));
  assert.ok(allDelivered, `${TASKS - missing.length} of ${TASKS} final states delivered: ${JSON.stringify(missing)}`);
  const deliveredAt = Date.now();
  for (const view of views) {
    const todo = peer.todos.get(view.id)!;
    assert.match(todo.summary!, new RegExp(`^bash task ${view.id} ${view.state}: `));
    if (view.state === 'done') assert.match(todo.summary!, new RegExp(`: exit ${view.exit_code} after`));
  }
  const running = [...peer.todos.values()].filter((todo) => todo.state === 'running' || todo.state === 'pending');
  assert.deepEqual(
    running.map((todo) => todo.key),
    [],
    'no todo is left showing a task as running',
  );
  // The daemon sent no later state after a final one, on any connection.
  for (const view of views)
    assert.equal(peer.requestsFor(view.id).at(-1)?.state, view.state, `the last request for ${view.id} is its end`);
  assert.ok(
    await waitFor(async () => (await healthz(daemon.origin)).todos.outbox_depth === 0, 60_000),
    'the outbox drained',
  );
  assert.ok(
    flapsWhileEnding >= 1 && behaviour.slow > 0 && behaviour.refused > 0,
    `the harness flapped ${flapsWhileEnding} times while the tasks ended and was slow and refusing: ${JSON.stringify(behaviour)}`,
  );
  report(t, {
    test: 'harness-socket',
    tasks: TASKS,
    requests: peer.received.length,
    flaps,
    flaps_while_tasks_ended: flapsWhileEnding,
    answers: behaviour,
    tasks_ended_ms: endedAt - began,
    recovered_ms: worstUntil - began,
    all_delivered_ms: deliveredAt - began,
  });
});
