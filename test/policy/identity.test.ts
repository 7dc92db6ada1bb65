// A rule names a program, not a file name: an exec of a file that is the ruled program is matched
// as that program however it is reached (a copy, a hard link, the dynamic loader, a memfd, git's
// dashed name), and a #! script as the kernel runs it (its interpreter, the line's argument, the
// script, its arguments), in both containment modes. No task under a policy mounts a binfmt_misc,
// whose binary formats would run an interpreter past the rules; no sandboxed task mounts one at all.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { nativeContainment, startTestDaemon } from '../helpers/daemon.js';
import { connectClient } from '../helpers/mcp-client.js';
import { runDone } from '../helpers/run-done.js';
import { makeScratchDir } from '../helpers/scratch.js';
import { startPolicyDaemon } from './policy-daemon.js';

const POLICY = {
  default: 'allow',
  rules: [
    { match: ['git', 'push'], decision: 'deny', reason: 'no pushes from a task' },
    { match: ['sh', '-e', './deploy.sh', 'prod'], decision: 'deny', reason: 'no deploys to prod' },
  ],
};
const LOADER = process.arch === 'arm64' ? '/lib/ld-linux-aarch64.so.1' : '/lib64/ld-linux-x86-64.so.2';
/** Runs a memfd holding a copy of the program at argv[1], as argv[2:] (fexecve: execveat AT_EMPTY_PATH). */
const MEMFD_PY = `import os, sys
fd = os.memfd_create('copy')
os.write(fd, open(sys.argv[1], 'rb').read())
try: os.execve(fd, sys.argv[2:], os.environ)
except PermissionError as error: print('memfd=refused', error.errno)`;

/** Each way to the ruled program, each telling its outcome; git itself is bin/git, first on PATH. */
const COMMAND = [
  'cp bin/git copied; ./copied push origin; echo "copy=$?"',
  'ln bin/git linked; ./linked push origin; echo "link=$?"',
  `${LOADER} ./copied push origin; echo "loader=$?"`,
  `${LOADER} --argv0 x --inhibit-cache -- bin/git push origin; echo "loader-options=$?"`,
  'python3 memfd.py bin/git copy push origin',
  '"$(git --exec-path)"/git-push origin; echo "git-core=$?"',
  '(exec -a git-push ./copied origin); echo "argv0=$?"',
  './deploy.sh prod; echo "script=$?"',
  './deploy.sh staging; echo "staging=$?"',
  './copied --version >/dev/null; echo "version=$?"',
  `${LOADER} ./copied --version >/dev/null; echo "loader-version=$?"`,
  // A loader whose program is past the 64 words the shim reads cannot be matched whole.
  `${LOADER} $(printf -- '--argv0 x %.0s' $(seq 40)) ./copied --version; echo "too-long=$?"`,
].join('\n');

for (const containment of ['cgroup', nativeContainment() === 'cgroup' ? 'process-group' : null] as const) {
  if (containment === null) continue;
  test(`a copy, a link, ld.so, a memfd and git's dashed name of a denied program are refused (${containment})`, async (t) => {
    const daemon = await startPolicyDaemon(t, { containment, policy: POLICY, placePrograms: placeGit });
    const tools = await connectClient(t, daemon.url);
    writeFileSync(join(daemon.dir, 'memfd.py'), MEMFD_PY);
    writeFileSync(join(daemon.dir, 'deploy.sh'), '#!/bin/sh -e\necho "deployed to $1"\n', { mode: 0o755 });
    const started = await tools.ok('run', { command: COMMAND, cwd: daemon.dir, env: daemon.env, wait_seconds: 0 });
    const view = await tools.statusWhen(started.id, (s) => s.state === 'done', 'the task ended', 60_000);
    assert.equal(
      view.stdout_tail,
      [
        'copy=126',
        'link=126',
        'loader=126',
        'loader-options=126',
        'memfd=refused 13',
        'git-core=126',
        'argv0=126',
        'script=126',
        'deployed to staging',
        'staging=0',
        'version=0',
        'loader-version=0',
        'too-long=126',
        '',
      ].join('\n'),
    );
    const refusals = view.stderr_tail.split('\n').filter((line: string) => line.startsWith('hive-bash policy:'));
    const push = 'by rule 0 (git push): no pushes from a task';
    assert.deepEqual(refusals, [
      `hive-bash policy: refused \`copied push origin\` ${push}`,
      `hive-bash policy: refused \`linked push origin\` ${push}`,
      `hive-bash policy: refused \`${basename(LOADER)} ./copied push origin\` ${push}`,
      `hive-bash policy: refused \`${basename(LOADER)} --argv0 x --inhibit-cache -- bin/git push origin\` ${push}`,
      `hive-bash policy: refused \`'memfd:copy (deleted)' push origin\` ${push}`,
      `hive-bash policy: refused \`git-push origin\` ${push}`,
      `hive-bash policy: refused \`copied origin\` ${push}`,
      'hive-bash policy: refused `deploy.sh prod` by rule 1 (sh -e ./deploy.sh prod): no deploys to prod',
      `hive-bash policy: refused \`${basename(LOADER)} ${'--argv0 x '.repeat(31)}--argv0 ...\` by the policy: it runs a program whose words go past the 64 of its argv the policy reads`,
    ]);
    assert.equal(view.policy.denied_count, 9);
  });
}

/** The test's own git, first on the daemon's PATH: a hard link to it is on its file system. */
function placeGit(dir: string) {
  mkdirSync(join(dir, 'bin'));
  copyFileSync('/usr/bin/git', join(dir, 'bin', 'git'));
}

/** A stand-in for busybox: one file that runs the applet its argv[0] (or first argument) names. */
const BUSYBOX = `#!/bin/sh
name=$(basename "$0"); if [ "$name" = busybox ]; then name=$1; shift; fi
echo "$name ran: $*"
`;

test('a multi-call binary is matched by the applet it runs, not as each name it has', async (t) => {
  const policy = { default: 'allow', rules: [{ match: ['hive-fetch'], decision: 'deny', reason: 'no downloads' }] };
  const daemon = await startPolicyDaemon(t, { policy, placePrograms: placeBusybox });
  const tools = await connectClient(t, daemon.url);
  const command = [
    'hive-fetch x; echo "link=$?"',
    'hive-list y; echo "other=$?"',
    'busybox hive-fetch x; echo "applet=$?"',
    'cp bin/busybox bb; (exec -a hive-fetch ./bb x); echo "argv0=$?"',
  ].join('\n');
  const started = await tools.ok('run', { command, cwd: daemon.dir, env: daemon.env, wait_seconds: 0 });
  const view = await tools.statusWhen(started.id, (s) => s.state === 'done', 'the task ended', 60_000);
  assert.equal(view.stdout_tail, 'link=126\nhive-list ran: y\nother=0\napplet=126\nargv0=126\n');
  assert.deepEqual(
    view.policy.denied.map((denied: { command: string }) => denied.command),
    ['hive-fetch x', 'busybox hive-fetch x', 'bb x'],
  );
});

/** busybox in the daemon's bin/, and two of its applets as links to it. */
function placeBusybox(dir: string) {
  mkdirSync(join(dir, 'bin'));
  writeFileSync(join(dir, 'bin', 'busybox'), BUSYBOX, { mode: 0o755 });
  for (const applet of ['hive-fetch', 'hive-list']) symlinkSync('busybox', join(dir, 'bin', applet));
}

/** A binary format for `.hbpl` files that runs perl (Linux 6.7+: a binfmt_misc of the task's own user namespace), then such a file run, as a task types it. */
const BINFMT_COMMAND = [
  'mkdir -p bm; mount -t binfmt_misc binfmt_misc bm; echo "mount=$?"',
  `echo ':hbpl:E::hbpl::/usr/bin/perl:' > bm/register`,
  `printf 'print "PERL RAN\\n";' > x.hbpl; chmod +x x.hbpl`,
  // execve itself: a shell would run a file the kernel refuses (ENOEXEC) as a script.
  `python3 -c 'import os; os.execv("./x.hbpl", ["x.hbpl"])' 2>/dev/null; echo "ran=$?"`,
  `unshare --user --map-root-user --mount sh -c 'mount -t binfmt_misc binfmt_misc bm; echo "nested=$?"'`,
  'umount bm 2>/dev/null; true',
].join('\n');

test("under a command policy no task mounts a binfmt_misc: a binary format's interpreter would run past its rules", async (t) => {
  const policy = { default: 'allow', rules: [{ match: ['perl'], decision: 'deny', reason: 'no perl' }] };
  const daemon = await startPolicyDaemon(t, { policy });
  const tools = await connectClient(t, daemon.url);
  const task = await runDone(tools, { command: BINFMT_COMMAND, cwd: daemon.dir, env: daemon.env });
  assert.equal(task.stdout_tail, 'mount=32\nran=1\nnested=32\n', task.stderr_tail);
  assert.match(task.stderr_tail, /mounting a filesystem \(mount -t, fsopen\) is refused under a command policy/);
});

/** Every way to a filesystem of its own, told on stdout, then a bind mount and its undoing, in a mount namespace of its own. */
const MOUNTS_COMMAND = [
  'mkdir -p m src; touch src/seen',
  'mount -t tmpfs none m; echo "tmpfs=$?"',
  'mount -t proc proc m; echo "proc=$?"',
  `python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); fd = libc.syscall(430, b"tmpfs", 0); print("fsopen=" + ("0" if fd >= 0 else str(ctypes.get_errno())))'`,
  `unshare -m sh -c 'mount --bind src m && ls m && mount -o remount,bind,ro m && umount m; echo "bind=$?"'`,
].join('\n');

// The check reads no type: a type in the task's memory can be changed by another of its threads
// after the check and before the kernel reads it (a `tmpfs` let through became a binfmt_misc).
test('under a command policy no task mounts a filesystem of any type, by mount or fsopen; binds and remounts work', async (t) => {
  const policy = { default: 'allow', rules: [{ match: ['perl'], decision: 'deny', reason: 'no perl' }] };
  const daemon = await startPolicyDaemon(t, { policy });
  const tools = await connectClient(t, daemon.url);
  const dir = makeScratchDir(t, 'mounts');
  const task = await runDone(tools, { command: MOUNTS_COMMAND, cwd: dir, env: daemon.env });
  assert.equal(task.stdout_tail, 'tmpfs=32\nproc=32\nfsopen=1\nseen\nbind=0\n', task.stderr_tail);
});

test('no sandboxed task mounts a binfmt_misc, with no policy too', async (t) => {
  const dir = makeScratchDir(t, 'binfmt');
  const daemon = await startTestDaemon(t);
  const tools = await connectClient(t, daemon.url);
  for (const write of [[dir], ['/']]) {
    const task = await runDone(tools, { command: BINFMT_COMMAND, cwd: dir, sandbox: { write, network: false } });
    // Nor in a user namespace of its own, which it cannot make (the nested sh never runs).
    assert.equal(task.stdout_tail, 'mount=32\nran=1\n', JSON.stringify(write));
  }
});
