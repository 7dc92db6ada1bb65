// The ways out of a sandbox, each tried by a real task of a real daemon as root:
// changing the metadata of a file outside its write dirs (mode, owner, times, an extended
// attribute, the immutable flag); typing into another task's terminal and a host one (TIOCSTI);
// asking for a write dir that is a symlink out of the operator's floor; making a device node in a
// write dir (or using one left there) to reach a block device. Each is refused (by the kernel, or
// by the floor check) and what is outside stays as it was. Also: the capabilities a sandboxed task
// holds, in every set, and that the leader opens its write dirs without following a symlink.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { ReadStream } from 'node:tty';
import { describe, test, type TestContext } from 'node:test';
import { SHIM_PATH } from '../../src/process/native.js';
import { openTerminal } from '../../src/process/terminals.js';
import { readLines } from '../../src/shared/line-reader.js';
import { startTestDaemon, type TestContainment } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { REPO_ROOT } from '../helpers/nix-module.js';
import { waitFor } from '../helpers/processes.js';
import { runDone } from '../helpers/run-done.js';
import { makeScratchDir } from '../helpers/scratch.js';

const fixture = (name: string) => join(REPO_ROOT, 'test/sandbox/fixtures', name);

/** What a metadata change would show: ctime moves with any of them, whatever else it restores. */
function metadataOf(path: string) {
  const { mode, uid, gid, mtimeNs, ctimeNs } = statSync(path, { bigint: true });
  const xattrs = execFileSync('python3', ['-c', 'import os, sys; print(sorted(os.listxattr(sys.argv[1])))', path]);
  const flags = execFileSync('lsattr', ['-d', path], { encoding: 'utf8' }).split(' ')[0];
  return { mode, uid, gid, mtimeNs, ctimeNs, xattrs: xattrs.toString().trim(), flags };
}

/** `change-metadata.py`'s lines as "FILE CHANGE" -> "ok" or the errno's name. */
function outcomes(stdout: string): Map<string, string> {
  return new Map(
    stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.lastIndexOf(' ')), line.split(' ').pop()!]),
  );
}

/** The bits of the capabilities a sandboxed task keeps (docs/sandbox-and-policy.md, Sandboxed tasks). */
const KEPT_CAPABILITIES = [0, 1, 3, 4, 5, 6, 7, 8, 10, 18, 29]; // CHOWN DAC_OVERRIDE FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE SYS_CHROOT AUDIT_WRITE
const KEPT_MASK = KEPT_CAPABILITIES.reduce((mask, bit) => mask | (1n << BigInt(bit)), 0n)
  .toString(16)
  .padStart(16, '0');

/** Types `line` into an interactive bash on a terminal and waits until it has run it: a file it touches appears. */
async function typeAndWait(type: (text: string) => unknown, dir: string, name: string): Promise<void> {
  await type(`touch ${dir}/${name}\n`);
  assert.ok(await waitFor(() => existsSync(join(dir, name)), 30_000), `the bash ran "touch ${name}"`);
}

/** An interactive bash on a terminal of this test process (a host terminal, not a task's): typed into through its master. */
async function startHostBash(t: TestContext, dir: string): Promise<(text: string) => void> {
  const { masterFd, path } = openTerminal(80, 24);
  const master = new ReadStream(masterFd);
  master.on('data', () => {}); // its echo and prompts, read so that it never blocks on them
  master.on('error', () => {});
  const slave = openSync(path, 'r+');
  const bash = spawn('setsid', ['-c', 'bash', '--norc', '--noprofile', '-i'], {
    stdio: [slave, slave, slave],
    cwd: dir,
  });
  closeSync(slave);
  t.after(() => {
    bash.kill('SIGKILL');
    master.destroy();
  });
  const type = (text: string) => master.write(text);
  await typeAndWait(type, dir, 'host-ready');
  return type;
}

for (const containment of ['cgroup', 'process-group'] as TestContainment[]) {
  describe(`containment ${containment}`, () => {
    test('a sandboxed task cannot change the metadata of a file outside its write dirs (mode, owner, times, xattrs, flags), and can inside', async (t) => {
      const [work, outside] = [makeScratchDir(t, 'work'), makeScratchDir(t, 'outside')];
      const [victim, own] = [join(outside, 'victim'), join(work, 'own')];
      writeFileSync(victim, 'as it was\n');
      writeFileSync(own, 'mine\n');
      const before = metadataOf(victim);
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const task = await runDone(tools, {
        command: `python3 ${fixture('change-metadata.py')} ${victim} ${own}`,
        sandbox: { write: [work], network: false },
      });
      const seen = outcomes(task.stdout_tail);
      for (const change of ['chmod', 'chown', 'utime', 'setxattr', 'immutable'])
        assert.equal(seen.get(`${victim} ${change}`), 'EROFS', `${change} outside: ${task.stdout_tail}`);
      assert.deepEqual(metadataOf(victim), before, 'the file outside is as it was');
      for (const change of ['chmod', 'chown', 'utime', 'setxattr'])
        assert.equal(seen.get(`${own} ${change}`), 'ok', `${change} inside: ${task.stdout_tail}`);
      assert.equal(seen.get(`${own} immutable`), 'EPERM', 'no task may make a file immutable (CAP_LINUX_IMMUTABLE)');
      assert.equal(statSync(own).uid, 65534);
    });

    test("a sandboxed task cannot type into another task's terminal or a host terminal (TIOCSTI), nor into its own", async (t) => {
      const dir = makeScratchDir(t, 'keys');
      const typeHost = await startHostBash(t, dir);
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const victim = await tools.ok('run', {
        command: 'bash --norc --noprofile -i',
        cwd: dir,
        pty: true,
        interactive: true,
        wait_seconds: 0,
      });
      const typeVictim = (text: string) => tools.ok('input', { id: victim.id, text });
      await typeAndWait(typeVictim, dir, 'victim-ready');
      // With the network (the walk-out's case, where CAP_SYS_ADMIN was kept), and without Landlock.
      const sandboxes = [{ write: [join(dir, 'work')] }, { write: ['/'], network: false }];
      mkdirSync(join(dir, 'work'));
      for (const [index, sandbox] of sandboxes.entries()) {
        const attack = await runDone(tools, {
          command: `python3 ${fixture('inject-keys.py')} "touch ${dir}/injected-${index}"$'\\n'`,
          sandbox,
          pty: true,
        });
        const lines = attack.stdout_tail.replaceAll('\r', '').trim().split('\n');
        assert.equal(lines.at(-1), 'done', attack.stdout_tail);
        assert.deepEqual(
          lines.filter((line: string) => line.endsWith(' sent')),
          [],
          `no terminal took the keys: ${attack.stdout_tail}`,
        );
        assert.ok(lines.includes('/dev/pts/0 ioctl EPERM'), `its own terminal refused them too: ${attack.stdout_tail}`);
      }
      // Each bash has run all that was typed into it before its check line: nothing was injected ahead of it.
      await typeAndWait(typeVictim, dir, 'victim-check');
      await typeAndWait(typeHost, dir, 'host-check');
      assert.deepEqual(
        sandboxes.map((_, index) => existsSync(join(dir, `injected-${index}`))),
        [false, false],
      );
      await tools.ok('kill', { id: victim.id, force: true });
    });

    test('a sandboxed task cannot make a device node, nor write a block device through one left in its write dir', async (t) => {
      const [work, outside] = [makeScratchDir(t, 'work'), makeScratchDir(t, 'outside')];
      const image = join(outside, 'disk.img');
      const contents = Buffer.alloc(1 << 20, 'A');
      writeFileSync(image, contents);
      const loop = execFileSync('losetup', ['--find', '--show', image], { encoding: 'utf8' }).trim();
      t.after(() => spawnSync('losetup', ['--detach', loop]));
      // A loop device made for this (all others busy) gets its /dev node from devtmpfs a moment later.
      assert.ok(await waitFor(() => existsSync(loop)), `${loop} appears`);
      const { rdev } = statSync(loop);
      const [major, minor] = [Math.floor(rdev / 256) & 0xfff, (rdev & 0xff) | ((rdev >> 12) & 0xfff00)];
      const left = join(work, 'left-behind');
      execFileSync('mknod', [left, 'b', String(major), String(minor)]);
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const write = (target: string) => `dd if=/dev/zero of=${target} bs=512 count=8 conv=notrunc,fsync status=none`;
      const confined = await runDone(tools, {
        command: [
          `mknod ${work}/block b ${major} ${minor}; echo "block: $?"`,
          `mknod ${work}/char c 1 3; echo "char: $?"`,
          `${write(left)}; echo "left behind: $?"`,
          `${write(loop)}; echo "loop: $?"`,
        ].join('; '),
        sandbox: { write: [work], network: false },
      });
      const seen = `stdout:\n${confined.stdout_tail}stderr:\n${confined.stderr_tail}`;
      assert.equal(confined.stdout_tail, 'block: 1\nchar: 1\nleft behind: 1\nloop: 1\n', seen);
      assert.equal(
        confined.stderr_tail,
        [
          `mknod: ${work}/block: Permission denied`, // Landlock: no device node in a write dir
          `mknod: ${work}/char: Permission denied`,
          `dd: failed to open '${left}': Permission denied`, // its write dirs are mounted nodev
          `dd: failed to open '${loop}': Permission denied`, // Landlock: /dev is outside its write dirs
          '',
        ].join('\n'),
      );
      // Where writes are not confined, the capability is gone all the same.
      const unconfined = await runDone(tools, {
        command: `mknod ${work}/block b ${major} ${minor}; echo "block: $?"`,
        sandbox: { write: ['/'], network: false },
      });
      assert.equal(unconfined.stdout_tail, 'block: 1\n');
      assert.equal(unconfined.stderr_tail, `mknod: ${work}/block: Operation not permitted\n`);
      assert.ok(!existsSync(join(work, 'block')) && !existsSync(join(work, 'char')));
      assert.ok(readFileSync(image).equals(contents), 'the file behind the loop device is as it was');
    });

    test('a sandboxed task holds only the capabilities a build needs, in every set, and so does what it starts', async (t) => {
      const daemon = await startTestDaemon(t, { containment });
      const tools = await connectClient(t, daemon.url);
      const sets = "grep ^Cap /proc/$$/status; bash -c 'grep ^Cap /proc/$$/status'";
      const expected = `CapInh:\t${'0'.repeat(16)}\nCapPrm:\t${KEPT_MASK}\nCapEff:\t${KEPT_MASK}\nCapBnd:\t${KEPT_MASK}\nCapAmb:\t${'0'.repeat(16)}\n`;
      for (const sandbox of [{ write: ['/tmp'] }, { network: false }, { write: ['/'] }]) {
        const task = await runDone(tools, { command: sets, sandbox });
        assert.equal(task.stdout_tail, expected.repeat(2), JSON.stringify(sandbox));
      }
      const free = await runDone(tools, { command: sets });
      const bounding = BigInt(`0x${/^CapBnd:\t(\w+)$/m.exec(free.stdout_tail)![1]}`);
      assert.equal((bounding >> 21n) & 1n, 1n, 'an unsandboxed task keeps CAP_SYS_ADMIN');
    });
  });
}

test("a write dir that is a symlink out of the operator's floor is refused by the path it resolves to", async (t) => {
  const root = makeScratchDir(t, 'floor');
  const [work, outside] = [join(root, 'work'), join(root, 'outside')];
  mkdirSync(work);
  mkdirSync(outside);
  const daemon = await startTestDaemon(t, { args: ['--sandbox-floor', JSON.stringify({ write: [work] })] });
  const tools = await connectClient(t, daemon.url);
  await runDone(tools, {
    command: `mkdir -p ${work}/proj && ln -s ${outside} ${work}/proj/esc && ln -s proj ${work}/alias`,
  });
  const escape = `${work}/proj/esc`;
  const refused = await tools.call('run', {
    command: `echo pwned > ${escape}/victim.txt`,
    sandbox: { write: [escape] },
  });
  assert.equal(refused.structured.error.code, 'ERR_SANDBOX_NOT_ALLOWED');
  assert.equal(
    refused.structured.error.message,
    `Invalid run input: "sandbox" is wider than the operator's floor (--sandbox-floor): it lets the task write in ${outside} ("sandbox.write[0]": "${escape}" resolves to it), and the floor allows at most: write beneath ${work}; network; nothing was started: ask for no more than that`,
  );
  assert.ok(!existsSync(join(outside, 'victim.txt')));
  const inside = await runDone(tools, { command: `touch ${work}/alias/ok`, sandbox: { write: [`${work}/alias`] } });
  assert.deepEqual(inside.sandbox.write, [`${work}/proj`], 'a symlink within the floor is allowed, shown resolved');
  assert.ok(existsSync(join(work, 'proj', 'ok')));
});

test("the leader opens each write dir without following a symlink: a directory swapped for one after the daemon's check is refused", async (t) => {
  const root = makeScratchDir(t, 'swap');
  const [work, outside] = [join(root, 'work'), join(root, 'outside')];
  mkdirSync(outside);
  symlinkSync(outside, work);
  // The shim as the daemon starts it for a run whose write dir `work` was a directory when checked.
  const shim = spawn(
    SHIM_PATH,
    ['-S', '-L', '-w', work, String(process.pid), '-', '/bin/sh', '-c', `echo pwned > ${work}/victim`],
    {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    },
  );
  const lines: string[] = [];
  readLines(shim.stdio[4] as Socket, (line) => lines.push(line));
  assert.equal(await new Promise((resolve) => shim.once('close', resolve)), 0);
  assert.deepEqual(lines.slice(0, 2), [`error 40 openat2 RESOLVE_NO_SYMLINKS ${work}`, 'exit 125']);
  assert.ok(!existsSync(join(outside, 'victim')));
});
