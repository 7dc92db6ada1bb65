// The native parts of a Linux install, checked once at start: the daemon's addon and executables
// (prebuilt in the package, or built from native/ at npm install), and the addons of better-sqlite3
// and node-pty. One that is missing, or built for another Node, makes a broken install (elsewhere
// than on Linux the daemon runs without its own, by design): the check names the part, why, and the
// command that rebuilds it.
import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDON_PATH, DAEMON_INIT_PATH, INIT_PATH, loadNative, SHIM_PATH, SPAWNER_PATH } from './native.js';

const require = createRequire(import.meta.url);
const PACKAGE_DIR = resolve(fileURLToPath(new URL('../../../', import.meta.url)));
const BUILD_TOOLS = 'it needs python3, make and g++';

/** One line on the first native part that cannot be used, or null when all can. */
export function findBrokenNativePart(): string | null {
  return checkAddon() ?? checkExecutables() ?? checkSqlite() ?? checkPty();
}

function checkAddon(): string | null {
  const native = loadNative();
  if (!('error' in native)) return null;
  return brokenPart(`the native addon ${ADDON_PATH}`, whyNotLoaded(native.cause), 'hive-bash-daemon', PACKAGE_DIR);
}

function checkExecutables(): string | null {
  for (const path of [SPAWNER_PATH, SHIM_PATH, INIT_PATH, DAEMON_INIT_PATH]) {
    try {
      accessSync(path, constants.X_OK);
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'is not built' : 'cannot be executed';
      return brokenPart(`the executable ${path}`, why, 'hive-bash-daemon', PACKAGE_DIR);
    }
  }
  return null;
}

function checkSqlite(): string | null {
  try {
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    new Database(':memory:').close(); // loads its addon
    return null;
  } catch (error) {
    const dir = dirname(require.resolve('better-sqlite3/package.json'));
    return brokenPart("better-sqlite3's addon", whyNotLoaded(error as Error), 'better-sqlite3', dir);
  }
}

/**
 * node-pty's addon, an N-API one (a build serves every Node), comes prebuilt in a package of each
 * platform, an optional dependency of @lydell/node-pty: it is looked for where @lydell/node-pty's
 * loader looks, not loaded (that costs 600 KB of a daemon that may never open a terminal).
 */
function checkPty(): string | null {
  const name = `@lydell/node-pty-${process.platform}-${process.arch}`;
  try {
    const nodePty = createRequire(require.resolve('@lydell/node-pty/package.json'));
    if (existsSync(join(dirname(nodePty.resolve(`${name}/package.json`)), 'pty.node'))) return null;
  } catch {
    // not installed: said below
  }
  return `broken install: node-pty's addon is missing (${name} is not installed: npm leaves it out under --omit=optional, and there is none for other platforms); install hive-bash-daemon again without --omit=optional`;
}

/** Why an addon did not load, in words: not built, built for another Node, or what dlopen said. */
function whyNotLoaded(error: Error | undefined): string {
  const message = error?.message ?? 'unknown error';
  const version = /NODE_MODULE_VERSION (\d+)/.exec(message);
  if (version)
    return `was built for another Node (NODE_MODULE_VERSION ${version[1]}; this Node ${process.version} needs ${process.versions.modules})`;
  if (/Cannot find module|Could not locate the bindings file|ENOENT/.test(message)) return 'is not built';
  return `cannot be loaded (${message.split('\n')[0]})`;
}

/** `PART WHY: rebuild it with COMMAND (TOOLS)`; the command rebuilds the package at `dir`, however it was installed. */
function brokenPart(part: string, why: string, name: string, dir: string): string {
  const parent = dirname(dir);
  const quote = (path: string) => (/[\s'"$`\\]/.test(path) ? JSON.stringify(path) : path);
  // Installed (globally, or in a project's node_modules): npm rebuilds it in the tree it is in. A
  // checkout of this project runs its own install script.
  const command =
    basename(parent) === 'node_modules'
      ? `npm rebuild --prefix ${quote(dirname(parent))} ${name}`
      : `npm run install --prefix ${quote(dir)}`;
  return `broken install: ${part} ${why}; rebuild it with: ${command} (${BUILD_TOOLS})`;
}
