#ifndef HIVE_TREE_H
#define HIVE_TREE_H

#include <sys/types.h>

/* Each function here returns -errno on failure and sets `*call` to the name of the call that
 * failed. A process that is gone meanwhile is no failure. */

/* Sends `sig` to every descendant of the calling process, each through its /proc entry opened and
 * then checked, so a reused pid is never signalled; the tree is read from the mounted /proc, in its
 * numbering, whichever PID namespace it is of. Returns how many were signalled. */
int signal_descendants(int sig, const char **call);

/* Sends `sig` to every process in the cgroup folder `dir` (through checked pidfds); returns how
 * many were signalled. */
int signal_cgroup(const char *dir, int sig, const char **call);

/* Writes 1 to `dir`/cgroup.kill: every process in it gets SIGKILL at once. 0 or -errno; `*call`
 * is "open" or "write". */
int kill_cgroup(const char *dir, const char **call);

/* Opens `dir`/cgroup.events to watch the cgroup empty: an fd that poll() reports with POLLPRI
 * when the file changes, or -errno (`*call` is "open"). */
int open_cgroup_events(const char *dir, const char **call);

/* Whether the cgroup of `events_fd` (from open_cgroup_events) still holds a live process: 1 or 0,
 * or -errno when the file cannot be read (the cgroup is gone). Each read re-arms the POLLPRI. */
int cgroup_populated(int events_fd);

/* Moves the calling process into the cgroup folder `dir` (writes `dir`/cgroup.procs). 0 or -errno;
 * `*call` is "open" or "write". */
int join_cgroup(const char *dir, const char **call);

/* The pid that this process's child `child` has in the /proc behind `proc_fd`, the procfs of an
 * outer PID namespace (this one's parent, say): 0 when no child of this process has that pid here,
 * else the pid or -errno. */
pid_t outer_pid_of_child(int proc_fd, pid_t child, const char **call);

#endif
