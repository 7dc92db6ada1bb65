// Who makes a call is told, where tasks have cgroups of their own, by the cgroup its socket was
// made in, with no process read: processes outside the tasks that hold many fds (any local user's)
// cannot make a connection's first call read them all on the main thread. Before, processes outside
// the tasks' PID namespace were read first and in full: 50 of them holding 19,800 fds each held
// the daemon 7.5 s at each new connection's first call. In process-group mode, where no cgroup
// tells, the outside processes holding many fds are read after those holding few (a caller's).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { test } from 'node:test';
import { report } from '../helpers/battery.js';
import { defaultContainment, startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';

const HOLDERS = 20;
const FDS = 19_000;

/** Starts HOLDERS processes (newer than this one) holding FDS fds each, ended with the test; their pids. */
async function startFdHolders(t: { after(fn: () => void): void }): Promise<number[]> {
  const script = [
    'import os, resource, sys',
    'resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)',
    `fd = os.open('/dev/null', os.O_RDONLY); held = [os.dup(fd) for _ in range(${FDS})]`,
    "print('held', flush=True); sys.stdin.read()",
  ].join('\n');
  const holders = Array.from({ length: HOLDERS }, () => spawn('python3', ['-c', script], { stdio: 'pipe' }));
  t.after(() => holders.forEach((holder) => holder.kill('SIGKILL')));
  let ready = 0;
  holders.forEach((holder) => holder.stdout.once('data', () => ready++));
  assert.ok(await waitFor(() => ready === HOLDERS, 60_000), `${ready} of ${HOLDERS} fd holders ready`);
  return holders.map((holder) => holder.pid!);
}

for (const containment of ['cgroup', 'process-group'] as const)
  test(
    `a connection's first call is not slowed by outside processes holding many fds (containment ${containment})`,
    {
      skip:
        containment === 'cgroup' && defaultContainment() !== 'cgroup' && 'cgroup containment is not the default here',
    },
    async (t) => {
      const daemon = await startTestDaemon(t, { containment });
      const pids = await startFdHolders(t);
      // The baseline, measured here: what reading those fds once costs this machine now.
      const scanStarted = performance.now();
      let links = 0;
      for (const pid of pids)
        for (const fd of readdirSync(`/proc/${pid}/fd`)) if (readlinkSync(`/proc/${pid}/fd/${fd}`)) links++;
      const scanMs = performance.now() - scanStarted;
      assert.ok(links >= HOLDERS * FDS, `${links} fds held`);
      // A new client (an older process than the holders) on a new connection: its first call.
      const started = performance.now();
      const tools = await connectClient(t, daemon.url);
      const ran = await tools.ok('run', { command: 'echo hi', wait_seconds: 20 });
      const callMs = performance.now() - started;
      assert.equal(ran.stdout_tail, 'hi\n');
      report(t, { fds: links, scan_ms: Math.round(scanMs), first_call_ms: Math.round(callMs) });
      assert.ok(
        callMs < scanMs / 2,
        `the first call took ${Math.round(callMs)} ms, a read of the fds ${Math.round(scanMs)} ms`,
      );
    },
  );
