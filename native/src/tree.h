#ifndef HIVE_TREE_H
#define HIVE_TREE_H

#include <sys/types.h>

/* Sends `sig` to every descendant of `root` (not `root` itself), each through a pidfd taken and
 * then checked against /proc, so a reused pid is never signalled. Returns how many were signalled. */
int signal_descendants(pid_t root, int sig);

/* Sends `sig` to every process in the cgroup folder `dir` (through checked pidfds); returns how
 * many were signalled, or -errno. */
int signal_cgroup(const char *dir, int sig);

/* Writes 1 to `dir`/cgroup.kill: every process in it gets SIGKILL at once. 0 or -errno. */
int kill_cgroup(const char *dir);

/* Moves the calling process into the cgroup folder `dir`. 0 or -errno. */
int join_cgroup(const char *dir);

#endif
