// npm run prebuilds (not `prebuild`: npm would run that before every `npm run build`): the native
// parts of binding.gyp (the N-API addon and the four executables) compiled for linux-x64 and
// linux-arm64 into prebuilds/linux-<arch>/ of the package, where the daemon looks first
// (src/process/native.ts) and native/install.js finds them at npm install, so that an install on
// those platforms compiles nothing of this project. arm64 is cross-compiled with Debian's
// gcc-aarch64-linux-gnu (.ci/install-cross). The executables are linked statically (they run on
// any glibc, any distribution); the addon is a shared object that Node loads: built on Debian 12, it
// needs glibc 2.34 (objdump -T), and where that is missing native/install.js builds one from source.
// The sources and flags are those of binding.gyp, which node-gyp builds from where there is no
// prebuild; the compilers run directly, so no python3 or make is needed here.
//
//   node native/prebuild.js [--out DIR] [x64] [arm64]     (default: both, into prebuilds/)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NATIVE = dirname(fileURLToPath(import.meta.url));
const COMPILERS = { x64: 'x86_64-linux-gnu-gcc', arm64: 'aarch64-linux-gnu-gcc' };
const OPTIMIZE = ['-O2', '-fno-omit-frame-pointer', '-pthread'];

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? args.splice(outAt, 2)[1] : join(NATIVE, '..', 'prebuilds');
const arches = args.length > 0 ? args : Object.keys(COMPILERS);
for (const arch of arches) if (!(arch in COMPILERS)) fail(`unknown architecture ${arch} (known: x64, arm64)`);

// binding.gyp is JSON here (no comments, double quotes), so it is read as such.
const { targets } = JSON.parse(readFileSync(join(NATIVE, 'binding.gyp'), 'utf8'));
const headers = nodeHeaders();

for (const arch of arches) {
  // Debian names its compilers by target; for this machine's own architecture plain cc does too.
  const cc = onPath(COMPILERS[arch]) || arch !== process.arch ? COMPILERS[arch] : 'cc';
  if (!onPath(cc)) fail(`${cc} is not on PATH: it builds the linux-${arch} prebuilds (.ci/install-cross installs it)`);
  const dir = join(out, `linux-${arch}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  for (const target of targets) {
    const sources = target.sources.map((source) => join(NATIVE, source));
    const flags = [...(target.cflags ?? []), ...(target.cflags_c ?? []), ...OPTIMIZE];
    if (target.type === 'executable') {
      compile(cc, [...flags, '-static', '-s', '-o', join(dir, target.target_name), ...sources]);
    } else {
      const defines = [`-DNODE_GYP_MODULE_NAME=${target.target_name}`, '-DBUILDING_NODE_EXTENSION'];
      const output = join(dir, `${target.target_name}.node`);
      compile(cc, [...flags, ...defines, `-I${headers}`, '-shared', '-fPIC', '-s', '-o', output, ...sources]);
    }
  }
  console.log(`prebuild: ${dir} (${targets.length} parts, ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

function compile(cc, argv) {
  execFileSync(cc, argv, { stdio: 'inherit' });
}

/** node_api.h and its siblings: those of the Node that runs this (its include/node), or npm's nodedir. */
function nodeHeaders() {
  const candidates = [join(dirname(process.execPath), '..', 'include', 'node')];
  if (process.env.npm_config_nodedir) candidates.unshift(join(process.env.npm_config_nodedir, 'include', 'node'));
  const found = candidates.find((dir) => existsSync(join(dir, 'node_api.h')));
  if (!found) fail(`no node_api.h in ${candidates.join(' or ')}`);
  return found;
}

function onPath(name) {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, name)));
}

function fail(message) {
  console.error(`prebuild: ${message}`);
  process.exit(1);
}
