/* A task leader's sandbox, set up in the leader between its fork and its exec, in this order:
 * a network namespace of its own (sandbox.c), a mount namespace of its own (sandbox-mounts.c),
 * the capabilities it has no use for dropped and no_new_privs set (sandbox-privileges.c), writes
 * confined by Landlock (sandbox.c), and a seccomp filter against typing into terminals
 * (sandbox-privileges.c). Each function returns 0, or -errno with `*call` (and `*object`, a path
 * or "", where it takes one) naming what failed. */
#ifndef HIVE_SANDBOX_H
#define HIVE_SANDBOX_H

/* The Landlock ABI version this kernel offers (1 and up), or -errno (-ENOSYS, -EOPNOTSUPP: none). */
int landlock_abi(void);

/* Moves the calling process into a network namespace of its own with loopback up. */
int isolate_network(const char **call);

/* Moves the calling process into a mount namespace of its own, private (no mount propagates in or
 * out), whose /dev/pts is a devpts instance of its own: `devpts_fd`, a detached devpts mount that
 * holds the task's terminal (open_detached_terminal), or a new one when it is -1. With
 * `read_only`, every mount is made read-only, recursively, but the `count` directories `dirs`,
 * which are bound back as they were, with nosuid and nodev added; each is opened without following
 * a symlink anywhere in its path, and its O_PATH fd left in `dir_fds` for confine_writes. Then the
 * working directory is entered again (so that it is the bound one), and a /dev/null on fds 0-2 is
 * opened again (so that it is the read-only one). */
int confine_mounts(const char *const *dirs, int count, int read_only, int devpts_fd, int *dir_fds, const char **call,
                   const char **object);

/* Drops from every capability set (bounding, permitted, effective, inheritable, ambient) all but
 * those a build or a test run as root needs: the bounding set decides what a root task's exec
 * gives, so nothing it starts gets them back. */
int drop_capabilities(const char **call);

/* Sets no_new_privs: what the process execs gains no privilege (set-id bits, file capabilities). */
int set_no_new_privs(const char **call);

/* Confines the calling process, and all it starts from now on, to changing files beneath the
 * `count` directories open at `dir_fds` (named `dirs`), and to writing the devices a shell needs.
 * no_new_privs must be set first. */
int confine_writes(const int *dir_fds, const char *const *dirs, int count, const char **call, const char **object);

/* A seccomp filter that refuses ioctl TIOCSTI and TIOCLINUX (typing into a terminal) with EPERM,
 * whatever the terminal. no_new_privs must be set first. */
int block_terminal_injection(const char **call);

/* What this kernel (or a seccomp profile around the daemon) lacks of what the sandbox calls, in
 * words ("mount_setattr (Linux 5.12)"), or NULL when it has it all. */
const char *sandbox_kernel_gap(void);

/* A pseudo-terminal of `cols` by `rows` in a devpts instance of its own, mounted nowhere yet: the
 * task's leader attaches it as its /dev/pts (confine_mounts). Fills the mount's fd, the master's
 * and the terminal's number in the instance (its slave is the mount's entry of that name). */
int open_detached_terminal(int cols, int rows, int *mount_fd, int *master_fd, int *number, const char **call);

#endif
