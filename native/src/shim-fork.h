/* Starting a task's shim without an exec: the spawner forks itself and the copy runs the shim. */
#ifndef HIVE_SHIM_FORK_H
#define HIVE_SHIM_FORK_H

#include <sys/types.h>

/* Reads the bounds of this process's code and data (/proc/self/stat), which a fork needs to show
 * its own command line and environment: once, before the first fork_shim. 0 or -errno. */
int load_memory_layout(void);

/* Starts the shim (run_shim) in a fork of this process, set up as posix_spawn would start its
 * executable: a session of its own, its fds 0..nfds-1 taken from `fds` and no other fd, in `cwd`,
 * `envp` its environment and `argv` its command line (as /proc shows them too), named
 * hive-task-shim. Returns once the fork has done all that: 0 with its pid, or -errno (the fork
 * failed and was reaped). The caller must be single-threaded and hold every signal at its default
 * disposition: the fork runs on with what it inherits. `argv` and `envp` must point into memory
 * from malloc (the kernel shows /proc's views only from anonymous memory), argv's strings one
 * after the other and the environment's after them, as a spawner request holds them. */
int fork_shim(char **argv, char **envp, const char *cwd, const int *fds, int nfds, pid_t *pid_out);

#endif
