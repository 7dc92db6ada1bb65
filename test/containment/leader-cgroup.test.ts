// How a task's leader enters its cgroup v2 folder: created in it (clone3 with CLONE_INTO_CGROUP),
// because a write to cgroup.procs may first wait out an RCU grace period (native/src/vfork-into.h);
// where clone3 is refused (a kernel before 5.3, or a seccomp filter such as Docker's default one,
// which answers ENOSYS), by that write before its exec, as before. Both watched with strace, which
// can also refuse the call; either way the leader runs in its cgroup from its first instruction.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { after, test, type TestContext } from 'node:test';
import { readLines } from '../../src/shared/line-reader.js';
import { cgroup2Mount } from '../../src/process/cgroups.js';
import { SHIM_PATH } from '../../src/process/native.js';
import { createTestCgroupRoot, removeTestCgroupRoot } from '../helpers/cgroups.js';

const HAS_STRACE = spawnSync('strace', ['-V'], { stdio: 'ignore' }).status === 0;
const root = process.arch === 'x64' ? createTestCgroupRoot(`leader-${process.pid}`) : null;
after(async () => {
  if (root !== null) await removeTestCgroupRoot(root);
});
const skipClone =
  process.arch !== 'x64'
    ? 'the shim creates the leader in its cgroup on x86-64 only'
    : root === null
      ? 'no writable cgroup v2 here'
      : false;
const skipTraced = skipClone || (HAS_STRACE ? false : 'strace is not installed');
/** A hung shim fails its test instead of the whole file's run. */
const TIMEOUT_MS = 60_000;

/** A task folder under the test root (task-*: removed with the root, whatever happens). */
function taskCgroup(name: string): string {
  const cgroup = join(root!, `task-${name}`);
  mkdirSync(cgroup);
  return cgroup;
}

/**
 * Runs `command` (the shim, or a shell that execs it) in a process group of its own, killed at the
 * test's end; resolves with its status lines and stdout once it exited 0.
 */
async function runShim(t: TestContext, command: string, args: string[]): Promise<{ status: string[]; stdout: string }> {
  const shim = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'] });
  t.after(() => {
    try {
      process.kill(-shim.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  });
  const status: string[] = [];
  readLines(shim.stdio[4] as Socket, (line) => status.push(line));
  let stdout = '';
  let stderr = '';
  shim.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  shim.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => shim.once('close', (exitCode) => resolve(exitCode)));
  assert.equal(code, 0, stderr);
  return { status, stdout };
}

interface TracedStart {
  /** The leader's pid, from the shim's "start" line. */
  leader: string;
  trace: string;
  cgroup: string;
}

/**
 * Runs the shim executable under strace (clone3 refused with ENOSYS if `refuse`) on a leader that
 * prints its cgroups, and checks what either way must hold: the leader started, ran in the cgroup
 * and ended.
 */
async function traceShim(t: TestContext, name: string, refuse: boolean): Promise<TracedStart> {
  const scratch = mkdtempSync(join(tmpdir(), 'hive-bash-leader-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const cgroup = taskCgroup(name);
  const traceFile = join(scratch, 'trace');
  // strace runs as the shell's pid ($$, the shim's PARENT_PID: the shim checks it is its parent).
  const script =
    'exec strace -f -qq -o "$1" -e trace=clone3,vfork,openat $2 "$3" $$ "$4" /bin/sh -c "cat /proc/self/cgroup"';
  const inject = refuse ? '-e inject=clone3:error=ENOSYS' : '';
  const { status, stdout } = await runShim(t, '/bin/sh', ['-c', script, 'sh', traceFile, inject, SHIM_PATH, cgroup]);
  const cgroupLine = stdout.split('\n').find((line) => line.startsWith('0::')) ?? stdout;
  assert.equal(cgroupLine, `0::${cgroup.slice(cgroup2Mount()!.length)}`);
  const leader = /^start (\d+)$/.exec(status[0] ?? '')?.[1];
  assert.ok(leader !== undefined, status.join('\n'));
  assert.deepEqual(status.slice(1, 2), ['exit 0']);
  return { leader, trace: readFileSync(traceFile, 'utf8'), cgroup };
}

const procsWrite = (cgroup: string) =>
  new RegExp(`openat\\(AT_FDCWD, "${cgroup}/cgroup\\.procs", O_WRONLY[^)]*\\) = \\d+`);

test(
  'the shim creates its leader in the cgroup (clone3 with CLONE_INTO_CGROUP) and writes no cgroup.procs',
  { skip: skipTraced, timeout: TIMEOUT_MS },
  async (t) => {
    const { leader, trace } = await traceShim(t, 'created', false);
    // strace before 5.7's flag names it as a number; the call may show in two parts
    // (`<unfinished ...>`, then `<... clone3 resumed>`).
    const call = /clone3\(\{flags=CLONE_VM\|CLONE_VFORK\|(?:CLONE_INTO_CGROUP|0x200000000), [^\n]*/.exec(trace)?.[0];
    assert.ok(call !== undefined, trace);
    const refused = /\) = -1 (E[A-Z0-9]+)/.exec(call)?.[1];
    if (refused !== undefined)
      return t.skip(`this kernel or a seccomp filter refuses clone3 into a cgroup (${refused})`);
    assert.match(trace, new RegExp(`(clone3\\(\\{flags=[^\\n]*|<\\.\\.\\. clone3 resumed>[^\\n]*) = ${leader}\\n`));
    assert.doesNotMatch(trace, /cgroup\.procs/, 'nothing joined the cgroup by writing');
  },
);

test(
  'where clone3 is refused (ENOSYS, as a seccomp filter answers), the leader joins its cgroup by writing cgroup.procs',
  { skip: skipTraced, timeout: TIMEOUT_MS },
  async (t) => {
    const { trace, cgroup } = await traceShim(t, 'refused', true);
    assert.match(trace, /clone3\(.*\) = -1 ENOSYS .*\(INJECTED\)/);
    assert.match(trace, procsWrite(cgroup));
  },
);

test(
  'a leader created in its cgroup has the stack a vfork child had: execvp runs a file with no #! line through /bin/sh, copying its 60,000 arguments onto that stack',
  { skip: skipClone, timeout: TIMEOUT_MS },
  async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'hive-bash-leader-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    const script = join(scratch, 'no-shebang');
    writeFileSync(script, 'echo "$# arguments"\n', { mode: 0o700 });
    const args = Array.from({ length: 60_000 }, (_, i) => String(i));
    const { status, stdout } = await runShim(t, SHIM_PATH, [
      String(process.pid),
      taskCgroup('many-args'),
      script,
      ...args,
    ]);
    assert.equal(stdout, '60000 arguments\n');
    assert.match(status[0] ?? '', /^start \d+$/);
    assert.deepEqual(status.slice(1, 2), ['exit 0'], 'not a SIGSEGV on a stack too small');
  },
);
