/* hive-task-shim, the executable: the shim's code (shim.c) run from its own command line. */
#include "shim.h"

int main(int argc, char **argv) { return run_shim(argc, argv); }
