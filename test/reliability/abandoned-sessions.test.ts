// Clients that open MCP sessions and walk away: the daemon's memory stays within a margin of where
// it was while they are open, every one is swept once idle, and the memory goes back afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { batterySize, healthz, processFigures, report } from '../helpers/battery.js';
import { startTestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/processes.js';
import { INITIALIZE, MCP_HEADERS } from '../helpers/raw-mcp.js';

const SESSIONS = batterySize(400, 1000);
const CALIBRATION = 50;
const PARALLEL = 8;
/** RSS margins over the level before: with every session open (each has its MCP server), and once they are swept. */
const OPEN_MARGIN_KB = 192 * 1024;
const SWEPT_MARGIN_KB = 64 * 1024;

interface Opened {
  id: string;
  sentAt: number;
}

/** Opens `count` sessions, PARALLEL at a time, each an initialize and the initialized notification, then left. */
async function openSessions(url: string, count: number): Promise<Opened[]> {
  const opened: Opened[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < count) {
        next++;
        const sentAt = Date.now();
        const res = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(INITIALIZE) });
        await res.text();
        const id = res.headers.get('mcp-session-id');
        assert.equal(res.status, 200);
        assert.ok(id);
        const notified = await fetch(url, {
          method: 'POST',
          headers: { ...MCP_HEADERS, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        });
        await notified.text();
        assert.equal(notified.status, 202);
        opened.push({ id, sentAt });
      }
    }),
  );
  return opened;
}

async function closeSessions(url: string, opened: Opened[]): Promise<void> {
  for (const { id } of opened) await (await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': id } })).text();
}

test(`${SESSIONS} abandoned MCP sessions keep the daemon's memory bounded and are all swept`, async (t) => {
  // How long opening takes here (once warm) decides the idle limit: twice what opening them all
  // should take, so that none is swept before all are open, however slow the machine.
  const calibration = await startTestDaemon(t);
  await closeSessions(calibration.url, await openSessions(calibration.url, CALIBRATION));
  const calibrationStart = Date.now();
  await openSessions(calibration.url, CALIBRATION);
  const projectedMs = ((Date.now() - calibrationStart) * SESSIONS) / CALIBRATION;
  assert.equal(await calibration.stop(), 0);
  const idleSeconds = Math.max(3, Math.ceil((2 * projectedMs) / 1000));
  const idleMs = idleSeconds * 1000;

  // All from 127.0.0.1, one peer: its limit (500 by default) raised to the sessions opened here.
  const daemon = await startTestDaemon(t, {
    args: ['--session-idle-seconds', String(idleSeconds), '--max-sessions-per-peer', String(SESSIONS)],
  });
  const pid = daemon.child.pid!;
  const sessions = async () => (await healthz(daemon.origin)).sessions as number;
  // A warm-up: the code paths of a session are loaded and compiled before the level is taken.
  await closeSessions(daemon.url, await openSessions(daemon.url, CALIBRATION));
  assert.equal(await sessions(), 0);
  const before = processFigures(pid);

  const opened = await openSessions(daemon.url, SESSIONS);
  const open = await sessions();
  const answeredAt = Date.now();
  const whileOpen = processFigures(pid);
  const openingMs = answeredAt - Math.min(...opened.map((session) => session.sentAt));
  // A session is swept only once idle for idleMs since its initialize was sent at the earliest:
  // those sent within idleMs before the count was answered are surely counted.
  const surelyOpen = opened.filter((session) => session.sentAt > answeredAt - idleMs).length;
  assert.ok(
    open >= surelyOpen && open <= SESSIONS,
    `${open} sessions counted, ${surelyOpen} of them surely open (opening took ${openingMs} ms, idle limit ${idleMs} ms)`,
  );
  assert.ok(
    whileOpen.rssKb <= before.rssKb + OPEN_MARGIN_KB,
    `RSS with ${open} sessions open: ${whileOpen.rssKb} kB, before ${before.rssKb} kB`,
  );

  const sweptAt = await waitFor(async () => (await sessions()) === 0 && Date.now(), idleMs + 30_000, 100);
  assert.ok(sweptAt, `every idle session was swept: ${await sessions()} left`);
  let after = processFigures(pid);
  const settled = await waitFor(
    () => {
      after = processFigures(pid);
      return after.rssKb <= before.rssKb + SWEPT_MARGIN_KB;
    },
    30_000,
    100,
  );
  assert.ok(settled, `RSS after the sweep: ${after.rssKb} kB, before ${before.rssKb} kB`);
  assert.ok(after.fds <= before.fds + 8, `open files after the sweep: ${after.fds}, before ${before.fds}`);
  for (const { id } of opened.slice(0, 20)) {
    const stale = await fetch(daemon.url, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': id },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    await stale.text();
    assert.equal(stale.status, 404, `session ${id} was closed`);
  }
  report(t, {
    test: 'abandoned-sessions',
    sessions: SESSIONS,
    idle_limit_s: idleSeconds,
    opening_ms: openingMs,
    counted_open: open,
    sweep_after_last_opened_ms: sweptAt - answeredAt,
    rss_kb: { before: before.rssKb, open: whileOpen.rssKb, swept: after.rssKb },
    fds: { before: before.fds, open: whileOpen.fds, swept: after.fds },
  });
});
