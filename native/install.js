// npm install's step for the daemon's native parts. Where the package ships them prebuilt for this
// platform (prebuilds/linux-x64/, prebuilds/linux-arm64/: native/prebuild.js) and they work here
// (the addon loads in this Node, an executable runs), there is nothing to build. Elsewhere node-gyp
// builds them from native/src into native/build/Release, as it always did: that needs python3, make
// and g++, and where one of them is missing this says so in one line and exits 1.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NATIVE = dirname(fileURLToPath(import.meta.url));
const platform = `${process.platform}-${process.arch}`;
const prebuilds = join(NATIVE, '..', 'prebuilds', platform);

const why = prebuiltFailure();
if (why === null) {
  console.log(`hive-bash-daemon: using the prebuilt native parts in ${prebuilds}`);
  process.exit(0);
}
const missing = ['python3', 'make', 'g++'].filter((tool) => !onPath(tool));
if (missing.length > 0) {
  console.error(
    `hive-bash-daemon: cannot build the native parts: ${why}, and building them from native/src needs python3, make and g++ (missing here: ${missing.join(', ')})`,
  );
  process.exit(1);
}
console.log(`hive-bash-daemon: building the native parts from native/src (${why})`);
const built = spawnSync('node-gyp', ['rebuild', '--directory', NATIVE], { stdio: 'inherit' });
process.exit(built.status ?? 1);

/** null when the prebuilt parts for this platform work here, else why not, in words. */
function prebuiltFailure() {
  if (!existsSync(prebuilds)) return `the package has no prebuilt native parts for ${platform}`;
  try {
    createRequire(import.meta.url)(join(prebuilds, 'hive_native.node'));
    for (const name of ['hive-task-shim', 'hive-task-spawner', 'hive-task-init', 'hive-daemon-init'])
      execFileSync(join(prebuilds, name), ['--version'], { stdio: 'ignore' });
    return null;
  } catch (error) {
    return `the prebuilt ones for ${platform} do not work here (${error.message.split('\n')[0]})`;
  }
}

function onPath(name) {
  return (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && existsSync(join(dir, name)));
}
