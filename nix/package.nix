# hive-bash-daemon as a nix package: every dependency comes from the committed package-lock.json
# (importNpmLock turns each locked tarball and its integrity hash into a fetchurl, so there is no
# dependency hash to compute), the native addons are compiled from source against the headers of
# the Node the daemon runs on, and every entry of package.json "bin" becomes a wrapper in $out/bin.
#
#   pkgs.callPackage ./nix/package.nix { npmRegistry = "<base URL of your npm registry>"; }   # on nodejs_22
#   pkgs.callPackage ./nix/package.nix { npmRegistry = "…"; nodejs = pkgs.nodejs_24; }
#
# Supported: Node 20, 22 and 24 (package.json "engines"; CI runs the suite on 20 and 24). nixpkgs
# marks nodejs_20 insecure since its end of life (April 2026).
#
# `nodejs`, the Node the daemon builds against and runs on, is read from the arguments rather than
# declared: callPackage fills every declared argument that pkgs has, defaults included, so a declared
# `nodejs ? nodejs_22` would always get pkgs.nodejs (whatever major that nixpkgs makes the default).
{
  lib,
  buildNpmPackage,
  importNpmLock,
  nodejs_22,
  # The base URL (no trailing slash) of the npm registry the locked tarballs come from; the lock file names none.
  npmRegistry,
  node-gyp,
  python3,
  ...
}@arguments:
let
  nodejs = arguments.nodejs or nodejs_22;
  packageJson = lib.importJSON ../package.json;
  # npm here writes lock files without "resolved" for registry packages (omit-lockfile-registry-resolved),
  # and importNpmLock fetches only entries that have one. The registry's tarball URL follows from the
  # name and version; the lock's integrity hash, which fetchurl checks, pins the content either way.
  withRegistryUrls =
    lock:
    lock
    // {
      packages = lib.mapAttrs (
        path: module:
        if path == "" || module ? resolved || module.link or false || !(module ? integrity) then
          module
        else
          module // { resolved = registryTarball path module; }
      ) lock.packages;
    };
  registryTarball =
    path: module:
    let
      name = module.name or (lib.last (lib.splitString "node_modules/" path));
      basename = lib.last (lib.splitString "/" name);
    in
    "${npmRegistry}/${name}/-/${basename}-${module.version}.tgz";

  # REGEXP_ENGINE_FLAGS of src/supervisor/readiness/wait-pattern.ts and HEAP_FLAGS of
  # src/supervisor/heap-flags.ts (test/nix/package.test.ts compares).
  daemonNodeFlags = [
    "--enable-experimental-regexp-engine"
    "--enable-experimental-regexp-engine-on-excessive-backtracks"
    "--max-semi-space-size=8"
    "--heap-growing-percent=50"
  ];

  root = toString ../.;
  keepSource =
    path: _type:
    let
      relative = lib.removePrefix "${root}/" (toString path);
      top = lib.head (lib.splitString "/" relative);
    in
    builtins.elem relative [ "package.json" "package-lock.json" "tsconfig.json" "README.md" ]
    || top == "src"
    || (top == "native" && relative != "native/build" && !lib.hasPrefix "native/build/" relative);
in
buildNpmPackage {
  pname = packageJson.name;
  inherit (packageJson) version;
  inherit nodejs;

  # Only what the build reads: a checkout's node_modules, dist and native/build stay out of the store.
  src = lib.cleanSourceWith {
    name = "${packageJson.name}-source";
    src = ../.;
    filter = keepSource;
  };

  npmDeps = importNpmLock {
    npmRoot = ../.;
    packageLock = withRegistryUrls (lib.importJSON ../package-lock.json);
  };
  npmConfigHook = importNpmLock.npmConfigHook;

  # stdenv already brings the C/C++ compiler and make; node-gyp drives them, python3 runs gyp.
  nativeBuildInputs = [
    node-gyp
    python3
  ];

  env = {
    # better-sqlite3 (prebuild-install) honours this: no prebuilt binary is downloaded or used,
    # node-gyp compiles the addon here. node-pty's addon comes prebuilt, as npm installs it
    # (@lydell/node-pty-linux-x64 and the like); the daemon's own parts build from native/src, since
    # the source taken here holds no prebuilds/.
    npm_config_build_from_source = "true";
  };

  # importNpmLock's config hook is built with nixpkgs' default nodejs, and its `npm rebuild` would
  # compile the addons against that Node's headers (a NODE_MODULE_VERSION mismatch at run time).
  # So the hook only installs and links; the install scripts run in preBuild against our Node.
  npmRebuildFlags = [ "--ignore-scripts" ];
  preBuild = ''
    export npm_config_nodedir=${nodejs}
    export npm_config_node_gyp=${nodejs}/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
    # Runs every dependency's install scripts and this package's own (the native/ addon, once it has one).
    npm rebuild --foreground-scripts
  '';

  # `npm run build` (tsc) ran in the build phase; `npm pack` in the install hook need not run it again.
  npmPackFlags = [ "--ignore-scripts" ];

  # The install hook wraps each bin as `node <file>`, which skips the file's shebang and with it the
  # V8 flags the daemon refuses to start without (README, Quick start): its wrapper is made again
  # with them. Node takes them only on its command line (not in NODE_OPTIONS).
  postInstall = ''
    makeWrapper ${nodejs}/bin/node "$out/bin/hive-bash-daemon" \
      --add-flags "${builtins.concatStringsSep " " daemonNodeFlags}" \
      --add-flags "$out/lib/node_modules/${packageJson.name}/${packageJson.bin.hive-bash-daemon}"
  '';

  meta = {
    inherit (packageJson) description;
    license = lib.licenses.mit;
    mainProgram = "hive-bash-daemon";
    platforms = lib.platforms.linux;
  };
}
