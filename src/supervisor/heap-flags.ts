// V8's heap bounds, given on Node's command line beside the regexp engine's flags (the bin's shebang,
// npm start, the nix wrapper, the tests' and benchmarks' daemons): V8 takes them only there, before
// any code runs, and they hold for every thread. A busy daemon's main thread would otherwise grow
// its young generation to V8's cap (32 MB on Node 20, 128 MB on Node 24) and keep the pages, and let
// its old generation fill with the short-lived records it promotes up to 4 times what a full
// collection leaves live. The running-rss row (bench/README.md), Node 20: 1,000 `sleep`s running
// 127.9 MB with them against 160.7 without; over 20,000 tasks 129.2 to 132.9 MB against 134.4 to
// 167.2. The semi-space flag also overrides the worker threads' own young generation (4 MB).

/** Young generation 16 MB (two semi-spaces of 8); a full collection once the old one grew by half. */
export const HEAP_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=50'] as const;
