#ifndef HIVE_SPAWN_H
#define HIVE_SPAWN_H

#include <sys/types.h>

/* Starts `path` in a new session with default signal dispositions and an empty mask, its fds
 * 0..nfds-1 taken from `fds`, in `cwd`, without fork()ing the caller (posix_spawn: CLONE_VFORK).
 * On success stores the child's pid and a pidfd for it; returns 0 or -errno. */
int spawn_session_leader(const char *path, char *const argv[], char *const envp[], const char *cwd,
                         const int *fds, int nfds, pid_t *pid_out, int *pidfd_out);

/* Reaps the process behind `pidfd` if it has exited (or, with `block`, once it exits): returns 1
 * with its status, 0 if it still runs, or -errno. `code` is the exit code, or -1 with `signal`
 * set when a signal ended it. */
int reap_pidfd(int pidfd, int block, int *code, int *signal);

#endif
