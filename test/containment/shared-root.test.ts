// Without --cgroup-root or a delegated cgroup, the daemon makes its task cgroups in a cgroup2
// mount's `hive-bash-daemon`, which every such daemon on the host shares: its own go in a folder
// of its own there, named by its state dir, so a restart on that state dir finds what a crashed
// daemon left, and no daemon mistakes another's task cgroups for its own.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  daemonV1Folders,
  listTaskCgroups,
  removeDaemonV1Folders,
  removeTestCgroupRoot,
  sharedCgroupFolder,
  writableCgroup2Mount,
} from '../helpers/cgroups.js';
import { daemonFolderName } from '../../src/process/cgroups.js';
import { runDaemonBinary, startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';

const skip = writableCgroup2Mount() === null ? 'no writable cgroup v2 here' : false;

test(
  "a daemon's task cgroups in the shared folder are in its own, which the next start on its state dir takes and a clean stop removes",
  { skip },
  async (t) => {
    const first = await startTestDaemon(t, { containment: 'cgroup', sharedCgroupRoot: true });
    const own = first.cgroupRoot!;
    const health = (await fetch(`${first.origin}/healthz`).then((res) => res.json())) as any;
    assert.equal(health.containment.cgroup_root, own);
    assert.match(own, /\/hive-bash-daemon\/state-[0-9a-f]{12}$/);
    const tools = await connectClient(t, first.url);
    const task = await tools.ok('run', { command: 'sleep 300', wait_seconds: 0 });
    const { pid } = await tools.statusWhen(task.id, (view) => view.pid !== null, 'the task started');
    const path = /^0::(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))![1]!;
    assert.ok(path.startsWith(`/${own.split('/').slice(-2).join('/')}/task-`), `the task is in ${path}`);
    assert.equal(listTaskCgroups(own).length, 1);
    await first.crash();
    const next = await startTestDaemon(t, {
      containment: 'cgroup',
      sharedCgroupRoot: true,
      stateDir: first.stateDir,
      env: { HIVE_TEST_MARK: first.marker },
    });
    assert.equal(next.cgroupRoot, own, 'the same state dir, the same folder');
    assert.deepEqual(listTaskCgroups(own), [], "the start removed the crashed daemon's task cgroup");
    assert.equal(await next.stop(), 0, next.stderr());
    assert.equal(existsSync(own), false, 'the clean stop removed its folder');
  },
);

test('a start that fails once its folders are made leaves none of them', { skip }, async (t) => {
  const stateDir = mkdtempSync(join(tmpdir(), 'hive-bash-failed-start-'));
  const own = sharedCgroupFolder(stateDir)!;
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    taken.close();
    await removeTestCgroupRoot(own);
    await removeDaemonV1Folders(daemonFolderName(stateDir));
    rmSync(stateDir, { recursive: true, force: true });
  });
  const port = String((taken.address() as AddressInfo).port);
  const args = ['--port', port, '--state-dir', stateDir, '--containment', 'cgroup'];
  const started = await runDaemonBinary(args);
  assert.equal(started.code, 1, started.stderr);
  assert.match(started.stderr, /EADDRINUSE/);
  const left = [own, ...daemonV1Folders(stateDir)].filter((dir) => existsSync(dir));
  assert.deepEqual(left, [], 'its folders are gone');
});
