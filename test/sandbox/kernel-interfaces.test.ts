// What no sandboxed task may write, whatever its write dirs: the kernel's interfaces (/proc, /sys,
// cgroupfs, wherever mounted) and devices but the null-like ones and its terminals; and what it may
// not call: the keyrings, io_uring, a new user namespace. A write dir there is refused before the
// start (given, defaulted from the cwd, or from the operator's flags), and even a task whose writes
// are not confined (write ["/"]) finds them read-only. Every write is tried by opening for writing
// and closing again, with nothing written. Also: the devices, terminals, /dev/shm and programs a
// build uses still work.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { writableCgroup2Mount } from '../helpers/cgroups.js';
import { nativeContainment, runDaemonBinary, startTestDaemon, type TestContainment } from '../helpers/daemon.js';
import { connectClient, type ToolClient } from '../helpers/mcp-client.js';
import { REPO_ROOT } from '../helpers/nix-module.js';
import { waitFor } from '../helpers/processes.js';
import { runDone } from '../helpers/run-done.js';
import { makeScratchDir } from '../helpers/scratch.js';

const fixture = (name: string) => join(REPO_ROOT, 'test/sandbox/fixtures', name);
const KERNEL_DIR_REMEDY =
  'give write directories outside /proc, /sys, /dev and the other kernel file systems (a sandbox without "write" writes in the run\'s cwd and the temporary directory)';
const PROC_REACH =
  "the kernel's processes and settings (a program named in /proc/sys/kernel/core_pattern runs as root on the host)";
/** A sysfs file a root task could change the kernel through. */
const SYS_FILE = ['/sys/kernel/mm/transparent_hugepage/enabled', '/sys/class/net/lo/mtu'].find(existsSync)!;

/** A bind mount of the host's /proc at a directory of its own, unmounted and removed after `t`. */
function bindProc(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'hive-bash-procbind-'));
  execFileSync('mount', ['--bind', '/proc', dir]);
  t.after(() => {
    spawnSync('umount', ['-l', dir]);
    rmdirSync(dir);
  });
  return dir;
}

/** A loop device over a file of the test's own, and a node of it outside /dev: [its /dev path, the node]. */
async function loopDevice(t: TestContext, dir: string): Promise<[string, string]> {
  const image = join(dir, 'disk.img');
  writeFileSync(image, Buffer.alloc(1 << 20, 'A'));
  const loop = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
  t.after(() => spawnSync('losetup', ['--detach', loop]));
  // A loop device made for this (all others busy) gets its /dev node from devtmpfs a moment later.
  assert.ok(await waitFor(() => existsSync(loop)), `${loop} appears`);
  const { rdev } = statSync(loop);
  const node = join(dir, 'left-behind');
  execFileSync('mknod', [
    node,
    'b',
    String(Math.floor(rdev / 256) & 0xfff),
    String((rdev & 0xff) | ((rdev >> 12) & 0xfff00)),
  ]);
  return [loop, node];
}

/** The message of a run refused with ERR_SANDBOX_NOT_ALLOWED. */
async function refusal(tools: ToolClient, args: Record<string, unknown>): Promise<string> {
  const refused = await tools.call('run', { command: 'true', ...args });
  assert.equal(refused.structured?.error?.code, 'ERR_SANDBOX_NOT_ALLOWED', refused.text);
  return refused.structured.error.message;
}

test('a write dir in /proc, /sys, cgroupfs or /dev, given or the cwd by default, is refused naming the path and why', async (t) => {
  const bound = bindProc(t);
  const links = makeScratchDir(t, 'links');
  execFileSync('ln', ['-s', '/proc/sys/kernel', join(links, 'kernel')]);
  const daemon = await startTestDaemon(t, {
    containment: nativeContainment(),
    args: ['--default-sandbox', JSON.stringify({ network: false })],
  });
  const tools = await connectClient(t, daemon.url);
  const refused = (source: string, what: string) =>
    `Invalid run input: ${source} is a sandbox no task may have: it lets the task write in ${what}; nothing was started: ${KERNEL_DIR_REMEDY}`;
  const inCwd = `/proc/sys/kernel ("cwd", a default write directory), and /proc/sys/kernel is in /proc, a proc mount: ${PROC_REACH}`;
  assert.equal(await refusal(tools, { cwd: '/proc/sys/kernel' }), refused("the daemon's --default-sandbox", inCwd));
  assert.equal(
    await refusal(tools, { cwd: '/proc/sys/kernel', sandbox: { network: false } }),
    refused('"sandbox"', inCwd),
  );
  const given = (dir: string) => refusal(tools, { sandbox: { write: ['/tmp', dir] } });
  assert.equal(
    await given('/proc'),
    refused('"sandbox"', `/proc ("sandbox.write[1]"), and /proc is a proc mount: ${PROC_REACH}`),
  );
  assert.equal(
    await given(join(links, 'kernel')),
    refused(
      '"sandbox"',
      `/proc/sys/kernel ("sandbox.write[1]": "${links}/kernel" resolves to it), and /proc/sys/kernel is in /proc, a proc mount: ${PROC_REACH}`,
    ),
  );
  assert.equal(
    await given(`${bound}/sys/kernel`),
    refused(
      '"sandbox"',
      `${bound}/sys/kernel ("sandbox.write[1]"), and ${bound}/sys/kernel is in ${bound}, a proc mount: ${PROC_REACH}`,
    ),
  );
  const cgroup2 = writableCgroup2Mount();
  // On a hybrid host /sys/fs/cgroup is a tmpfs in /sys; on a cgroup2-only one it is the cgroup2 mount.
  if (cgroup2 !== '/sys/fs/cgroup')
    assert.equal(
      await given('/sys/fs/cgroup'),
      refused(
        '"sandbox"',
        `/sys/fs/cgroup ("sandbox.write[1]"), and /sys/fs/cgroup is in /sys, a sysfs mount: the kernel's devices, drivers and settings`,
      ),
    );
  if (cgroup2 !== null)
    assert.equal(
      await given(cgroup2),
      refused(
        '"sandbox"',
        `${cgroup2} ("sandbox.write[1]"), and ${cgroup2} is a cgroup2 mount: control groups (a task that writes cgroup.procs moves itself out of its own, and out of kill's reach)`,
      ),
    );
  assert.equal(
    await given('/dev'),
    refused(
      '"sandbox"',
      `/dev ("sandbox.write[1]"), and /dev is a devtmpfs mount: devices (a disk's node reaches the whole disk)`,
    ),
  );
  assert.equal(
    await given('/dev/shm'),
    refused(
      '"sandbox"',
      `/dev/shm ("sandbox.write[1]"), and /dev/shm is the task's own: every sandboxed task has a /dev/shm of its own (a tmpfs), writable without asking`,
    ),
  );
  assert.deepEqual((await tools.ok('list', {})).tasks, [], 'nothing was started');
});

test('--default-sandbox or --sandbox-floor naming a write dir in the kernel interfaces stops the start', async (t) => {
  for (const [flag, dir, where] of [
    ['--default-sandbox', '/proc/sys/kernel', `/proc/sys/kernel is in /proc, a proc mount: ${PROC_REACH}`],
    ['--sandbox-floor', '/sys', "/sys is a sysfs mount: the kernel's devices, drivers and settings"],
  ]) {
    const result = await runDaemonBinary([
      '--port',
      '0',
      '--state-dir',
      makeScratchDir(t, 'state'),
      flag!,
      JSON.stringify({ write: [dir] }),
    ]);
    assert.equal(result.code, 2, result.stderr);
    assert.ok(
      result.stderr.includes(
        `${flag} is a sandbox no task may have: it lets the task write in ${dir} (its "write"[0]), and ${where}; ${KERNEL_DIR_REMEDY}`,
      ),
      result.stderr,
    );
  }
});

for (const containment of ['cgroup', 'process-group'] as TestContainment[]) {
  describe(`containment ${containment}`, () => {
    test("even with writes free (write ['/']), a sandboxed task cannot open the kernel's settings, its cgroup.procs or a device for writing, nor chmod /dev/null", async (t) => {
      const pattern = readFileSync('/proc/sys/kernel/core_pattern', 'utf8');
      const bound = bindProc(t);
      const work = makeScratchDir(t, 'work');
      const [loop, node] = await loopDevice(t, makeScratchDir(t, 'devices'));
      // Runs that give no sandbox get the floor's, which leaves writes free: write beneath /.
      const daemon = await startTestDaemon(t, {
        containment,
        args: ['--sandbox-floor', JSON.stringify({ network: false })],
      });
      const tools = await connectClient(t, daemon.url);
      const paths = ['/proc/sys/kernel/core_pattern', `${bound}/sys/kernel/core_pattern`, SYS_FILE, loop, node];
      for (const sandbox of [undefined, { write: [work] }]) {
        const task = await runDone(tools, {
          command: `python3 ${fixture('open-for-writing.py')} ${paths.join(' ')} CHMOD:/dev/null OWN-CGROUPS`,
          cwd: '/proc/sys/kernel',
          ...(sandbox === undefined ? {} : { sandbox }),
        });
        assert.deepEqual(task.sandbox, { write: sandbox?.write ?? ['/'], network: false });
        const lines = task.stdout_tail.trim().split('\n');
        const seen = `${JSON.stringify(task.sandbox)}: ${task.stdout_tail}${task.stderr_tail}`;
        assert.deepEqual(
          lines.slice(0, 6),
          [
            '/proc/sys/kernel/core_pattern EROFS',
            `${bound}/sys/kernel/core_pattern EROFS`,
            `${SYS_FILE} EROFS`,
            `${loop} EACCES`, // no device opens but the null-like ones and its terminals (nodev)
            `${node} EACCES`,
            'CHMOD:/dev/null EROFS',
          ],
          seen,
        );
        const cgroups = lines.slice(6);
        assert.ok(cgroups.length > 0, `it found its cgroups: ${seen}`);
        assert.deepEqual(
          cgroups.filter((line: string) => !/^cgroup:\S+ EROFS$/.test(line)),
          [],
          `its cgroup.procs is read-only in every hierarchy: ${seen}`,
        );
      }
      assert.equal(readFileSync('/proc/sys/kernel/core_pattern', 'utf8'), pattern, 'core_pattern is as it was');
    });

    test('a sandboxed task still writes the null-like devices, its terminal and new ptys, /dev/stdout, and a /dev/shm of its own', async (t) => {
      const work = makeScratchDir(t, 'work');
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      for (const [index, sandbox] of [{ write: [work] }, { write: ['/'], network: false }].entries()) {
        const own = `hive-bash-own-${daemon.marker}-${index}`;
        const task = await runDone(tools, {
          command: [
            'echo null > /dev/null && echo "null: ok"',
            'echo "zero: $(head -c 4 /dev/zero | wc -c)"',
            'echo full 2>/dev/null > /dev/full; echo "full: $?"',
            'echo "urandom: $(head -c 8 /dev/urandom | wc -c)"',
            'echo "tty: ok" > /dev/tty',
            `python3 -c 'import os; m, s = os.openpty(); print("pty:", os.ttyname(s))'`,
            'echo "stdout: ok" >> /dev/stdout',
            `touch /dev/shm/${own} && echo "shm: ok"`,
            `python3 -c 'from multiprocessing import Pool; print("pool:", sum(Pool(2).map(abs, [-1, -2])))'`,
          ].join('; '),
          sandbox,
          pty: true,
        });
        assert.equal(
          task.stdout_tail.replaceAll('\r', ''),
          'null: ok\nzero: 4\nfull: 1\nurandom: 8\ntty: ok\npty: /dev/pts/1\nstdout: ok\nshm: ok\npool: 3\n',
          JSON.stringify(sandbox),
        );
        assert.ok(!existsSync(`/dev/shm/${own}`), "the task's /dev/shm is its own, not the host's");
      }
    });

    test('a sandboxed task cannot use the keyrings or io_uring, nor make a user namespace, as a 64- or a 32-bit caller; threads and spawns still work', async (t) => {
      const work = makeScratchDir(t, 'work');
      const program = join(work, 'kernel-calls');
      execFileSync('cc', ['-O2', '-no-pie', '-o', program, fixture('kernel-calls.c')]);
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const task = await runDone(tools, {
        command: [
          program,
          'unshare --user true; echo "unshare --user: $?"',
          `python3 -c 'import subprocess, threading; t = threading.Thread(target=print, args=("thread",)); t.start(); t.join(); print(subprocess.run(["echo", "spawned"], capture_output=True, text=True).stdout, end="")'`,
          `node -e 'const { Worker } = require("node:worker_threads"); require("node:fs/promises").readFile("/etc/hostname").then(() => console.log("node fs")); console.log(require("node:child_process").execFileSync("echo", ["node spawned"], { encoding: "utf8" }).trim()); new Worker("console.log(\\"node worker\\")", { eval: true })'`,
        ].join('; '),
        sandbox: { write: [work], network: false },
      });
      const refused = (abi: string) => [
        `keyctl ${abi} EPERM`,
        `add_key ${abi} EPERM`,
        `request_key ${abi} EPERM`,
        `io_uring_setup ${abi} ENOSYS`,
        `unshare ${abi} EPERM`,
        `clone ${abi} EPERM`,
        `clone3 ${abi} ENOSYS`,
      ];
      const lines = task.stdout_tail.trim().split('\n');
      assert.deepEqual(lines.slice(0, 14), [...refused('64'), ...refused('32')], task.stdout_tail);
      assert.deepEqual(
        [...lines.slice(14, 17), ...lines.slice(17).sort()],
        ['unshare --user: 1', 'thread', 'spawned', 'node fs', 'node spawned', 'node worker'],
        task.stdout_tail,
      );
    });

    test('a build still runs in a sandbox: bash, git, make and cc, node, python3', async (t) => {
      const work = makeScratchDir(t, 'build');
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const task = await runDone(tools, {
        command: [
          'set -e',
          'git init -q',
          `printf 'int main(void) { return 0; }\\n' > main.c`,
          `printf 'main: main.c\\n\\tcc -O2 -o main main.c\\n' > Makefile`,
          'make -s',
          './main',
          'git add -A',
          'git -c user.name=build -c user.email=build@example.com commit -qm build',
          'echo "commits: $(git rev-list --count HEAD)"',
          `node -e 'require("node:fs").writeFileSync("out.json", JSON.stringify({ ok: true }))'`,
          `python3 -c 'import json; print("python:", json.load(open("out.json"))["ok"])'`,
        ].join('\n'),
        cwd: work,
        sandbox: { network: false },
      });
      assert.equal(task.exit_code, 0, task.stderr_tail);
      assert.equal(task.stdout_tail, 'commits: 1\npython: True\n');
    });
  });
}
