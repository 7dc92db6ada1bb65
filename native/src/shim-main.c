/* hive-task-shim, the executable: the shim's code (shim.c) run from its own command line. */
#include "self-check.h"
#include "shim.h"

int main(int argc, char **argv) {
  if (answered_version(argc, argv, "hive-task-shim")) return 0;
  return run_shim(argc, argv);
}
