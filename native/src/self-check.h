/* `EXECUTABLE --version`: the executable's name and the machine it was built for, on stdout, and
 * exit 0, before it does anything else. The check that a prebuilt executable runs on a machine
 * (test/package/prebuilds.test.ts runs the linux-arm64 ones under qemu-user). */
#ifndef HIVE_SELF_CHECK_H
#define HIVE_SELF_CHECK_H
#include <stdio.h>
#include <string.h>

#if defined(__aarch64__)
#define HIVE_MACHINE "aarch64"
#elif defined(__x86_64__)
#define HIVE_MACHINE "x86_64"
#else
#define HIVE_MACHINE "unknown"
#endif

/* Whether the command line is `NAME --version`; if so, prints `NAME MACHINE`. */
static inline int answered_version(int argc, char **argv, const char *name) {
  if (argc != 2 || strcmp(argv[1], "--version") != 0) return 0;
  printf("%s %s\n", name, HIVE_MACHINE);
  fflush(stdout);
  return 1;
}

#endif
