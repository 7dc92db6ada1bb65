/* The shim's code as one function: for its own executable (shim-main.c) and for the spawner's
 * forks of itself (shim-fork.c). */
#ifndef HIVE_SHIM_H
#define HIVE_SHIM_H

/* Runs the shim on `argv`, its command line (see shim.c); returns the exit status. Called once per
 * process: it keeps the task's state in one global, `shim` (shim-parts.h). */
int run_shim(int argc, char **argv);

#endif
