// A daemon started as the first process of a PID namespace (a container's CMD) runs under
// hive-daemon-init, which it puts above itself: PID 1 reaps every orphan the kernel hands it, and
// forwards the stop signal, so the daemon stops cleanly and PID 1 exits as the daemon did.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { readProcessEntry } from '../../src/process/process-table.js';
import { launchDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { waitFor } from '../helpers/processes.js';
import { makeScratchDir } from '../helpers/scratch.js';

/** The processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => readProcessEntry(child)?.ppid === pid);
}

test('as PID 1 the daemon runs under hive-daemon-init, which reaps the orphans handed to it and stops the daemon cleanly on SIGTERM', async (t) => {
  const stateDir = makeScratchDir(t, 'pid-one');
  // unshare's child is the namespace's PID 1: the daemon execs hive-daemon-init there, and runs
  // again as its child. Without the tasks' namespace, a task's orphans come to PID 1.
  const args = ['--port', '0', '--state-dir', stateDir, '--log-level', 'warn', '--task-namespace', 'off'];
  const unshare = ['unshare', '--pid', '--fork', '--mount-proc', '--kill-child', '--'];
  const { child, url } = await launchDaemon(args, {}, () => {}, t, unshare);
  const pidOne = (await waitFor(() => childrenOf(child.pid!)[0] ?? null))!;
  assert.equal(readProcessEntry(pidOne)?.name, 'hive-daemon-ini'); // the kernel keeps 15 characters of a name
  const daemon = childrenOf(pidOne)[0]!;
  assert.equal(readProcessEntry(daemon)?.name, 'hive-bash-daemo');
  const tools = await connectClient(t, url);
  // The task kills its shim: the bash and its sleep go to PID 1, where the daemon then kills them.
  const orphaned = await tools.ok('run', { command: 'sleep 600 & kill -9 $PPID; wait', wait_seconds: 30 });
  assert.match(orphaned.error, /its shim was killed/);
  // Once the daemon has killed them, PID 1 reaps them: nothing but the daemon is left under it, no zombie.
  const others = () => childrenOf(pidOne).filter((pid) => pid !== daemon);
  const left = await waitFor(() => (others().length === 0 ? [] : null), 30_000);
  assert.deepEqual(
    left,
    [],
    `left under PID 1: ${others()
      .map((pid) => `${pid} ${readProcessEntry(pid)?.state}`)
      .join(', ')}`,
  );
  const exited = once(child, 'exit');
  process.kill(pidOne, 'SIGTERM');
  const [code] = await exited;
  assert.equal(code, 0, 'the daemon stopped cleanly and PID 1 exited as it did');
});
