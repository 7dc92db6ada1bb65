// nix/package.nix hands importNpmLock a lock in which it can fetch every package, builds the native addons
// from source against its own Node, and every "bin" of package.json lands in the package.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REGEXP_ENGINE_FLAGS } from '../../src/supervisor/readiness/wait-pattern.js';
import { HEAP_FLAGS } from '../../src/supervisor/heap-flags.js';
import { evaluatePackage, hasNixInstantiate, REPO_ROOT } from '../helpers/nix-module.js';

const WITHOUT_NIX = hasNixInstantiate() ? false : 'nix-instantiate is not installed (.ci/nix-check installs it)';
const packageJson = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'));

interface LockedPackage {
  name?: string;
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
}
const locked = Object.entries(lock.packages as Record<string, LockedPackage>).filter(
  ([path, entry]) => path !== '' && !entry.link,
);

test('every package in the lock has the integrity hash importNpmLock fetches it by', () => {
  assert.ok(locked.length > 0);
  const missing = locked.filter(([, entry]) => !entry.integrity).map(([path]) => path);
  assert.deepEqual(missing, [], 'run npm install to give these an integrity hash');
});

test('every bin of package.json is a file npm pack ships, so the package wraps it', () => {
  const files: string[] = packageJson.files;
  for (const [name, target] of Object.entries(packageJson.bin as Record<string, string>)) {
    assert.ok(
      files.some((entry) => target === entry || target.startsWith(`${entry}/`)),
      `bin ${name} (${target}) is outside package.json "files": ${files.join(', ')}`,
    );
  }
});

test('each locked package reaches importNpmLock with its registry URL and its integrity', { skip: WITHOUT_NIX }, () => {
  const evaluated = evaluatePackage();
  assert.equal(evaluated.npmRoot.replace(/\/$/, ''), REPO_ROOT.replace(/\/$/, ''));
  for (const [path, entry] of locked) {
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const expected =
      entry.resolved ?? `https://npm-registry.test/${name}/-/${name.split('/').pop()}-${entry.version}.tgz`;
    assert.equal(evaluated.packageLock.packages[path]?.resolved, expected, path);
    assert.equal(evaluated.packageLock.packages[path]?.integrity, entry.integrity, path);
  }
});

test('the native addons are compiled from source against the Node the package runs on', { skip: WITHOUT_NIX }, () => {
  const evaluated = evaluatePackage();
  assert.equal(evaluated.pname, packageJson.name);
  assert.equal(evaluated.version, packageJson.version);
  assert.equal(evaluated.mainProgram, 'hive-bash-daemon');
  assert.equal(evaluated.env.npm_config_build_from_source, 'true');
  assert.ok(
    evaluated.npmRebuildFlags.includes('--ignore-scripts'),
    'the config hook must not build the addons against its own Node',
  );
  assert.match(evaluated.preBuild, new RegExp(`^export npm_config_nodedir=${evaluated.nodejs}$`, 'm'));
  assert.match(evaluated.preBuild, /^npm rebuild\b/m);
});

test(
  'the package runs on nodejs_22 unless given another Node, not on whatever pkgs.nodejs is',
  { skip: WITHOUT_NIX },
  () => {
    assert.match(
      evaluatePackage().nodejs,
      /-nodejs-22$/,
      'called as pkgs.callPackage calls it, with no nodejs argument',
    );
    for (const [attribute, name] of [
      ['nodejs_20', 'nodejs-20'],
      ['nodejs_24', 'nodejs-24'],
    ] as const) {
      const evaluated = evaluatePackage(attribute);
      assert.ok(evaluated.nodejs.endsWith(`-${name}`), `${attribute}: ${evaluated.nodejs}`);
      assert.match(evaluated.preBuild, new RegExp(`^export npm_config_nodedir=${evaluated.nodejs}$`, 'm'));
    }
  },
);

test(
  "hive-bash-daemon's wrapper starts its Node with the regexp engine's flags and the heap's bounds (the install hook's runs `node FILE`, skipping the shebang)",
  { skip: WITHOUT_NIX },
  () => {
    for (const nodejs of ['', 'nodejs_24']) {
      const evaluated = evaluatePackage(nodejs);
      assert.equal(
        evaluated.postInstall.replace(/\s*\\\n\s*/g, ' ').trim(),
        `makeWrapper ${evaluated.nodejs}/bin/node "$out/bin/hive-bash-daemon"` +
          ` --add-flags "${[...REGEXP_ENGINE_FLAGS, ...HEAP_FLAGS].join(' ')}"` +
          ` --add-flags "$out/lib/node_modules/${packageJson.name}/${packageJson.bin['hive-bash-daemon']}"`,
      );
    }
  },
);

test('package.json "engines" admits each Node the package can be given: 20, 22 and 24', () => {
  const engines: string = packageJson.engines.node;
  assert.equal(
    lock.packages[''].engines?.node,
    engines,
    "the lock file's root entry says the same (npm install --package-lock-only)",
  );
  for (const major of ['20', '22', '24'])
    assert.match(engines, new RegExp(`\\^${major}\\b`), `${major} is missing from "${engines}"`);
});
