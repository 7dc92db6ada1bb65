/* A task leader's sandbox, set up in the leader between its fork and its exec, in this order:
 * a network namespace of its own (sandbox.c), a mount namespace of its own (sandbox-mounts.c, with
 * the kernel's interfaces and the devices in it from sandbox-kernel.c), the capabilities it has no
 * use for dropped and no_new_privs set (sandbox-privileges.c), a Landlock domain of its own that
 * confines its writes, or none (sandbox.c), and a seccomp filter against typing into terminals,
 * the keyrings, io_uring and new user namespaces (sandbox-privileges.c). Without namespaces (the
 * shim's -F) only no_new_privs, Landlock and the filter are set up, the filter refusing every socket
 * but a unix one in place of the network namespace. Each function returns 0,
 * or -errno with `*call` (and `*object`, a path or "", where it takes one) naming what failed. */
#ifndef HIVE_SANDBOX_H
#define HIVE_SANDBOX_H

#include <stddef.h>

/* The Landlock ABI version this kernel offers (1 and up), or -errno (-ENOSYS, -EOPNOTSUPP: none). */
int landlock_abi(void);

/* Moves the calling process into a network namespace of its own with loopback up. */
int isolate_network(const char **call);

/* Moves the calling process into a mount namespace and an IPC namespace of its own, the mount one private (no mount propagates in or
 * out), whose /dev/pts is a devpts instance of its own: `devpts_fd`, a detached devpts mount that
 * holds the task's terminal (open_detached_terminal), or a new one when it is -1; /dev/ptmx leads
 * there, and /dev/shm is a tmpfs of its own. Every mount is made nodev but /dev/null, zero, full,
 * tty, random and urandom (bound back read-only), and every kernel interface mount (proc, sysfs,
 * cgroupfs and the like, wherever mounted: kernel_mount_of) read-only, with all beneath it. With
 * `read_only`, every other mount is made read-only too, recursively, but the `count` directories
 * `dirs`, which are bound back as they were, with nosuid and nodev added; each is opened without
 * following a symlink anywhere in its path, and its O_PATH fd left in `dir_fds` for
 * confine_writes. Then the working directory is entered again (so that it is the bound one), and a
 * /dev/null on fds 0-2 is opened again (so that it is the read-only one). */
int confine_mounts(const char *const *dirs, int count, int read_only, int devpts_fd, int *dir_fds, const char **call,
                   const char **object);

/* Opens each of the `count` directories `dirs` as confine_mounts does (O_PATH, no symlink followed
 * anywhere in its path) into `dir_fds`, for confine_writes where there is no mount namespace. */
int open_write_dirs(const char *const *dirs, int count, int *dir_fds, const char **call, const char **object);

/* Drops from every capability set (bounding, permitted, effective, inheritable, ambient) all but
 * those a build or a test run as root needs: the bounding set decides what a root task's exec
 * gives, so nothing it starts gets them back. */
int drop_capabilities(const char **call);

/* Sets no_new_privs: what the process execs gains no privilege (set-id bits, file capabilities). */
int set_no_new_privs(const char **call);

/* Confines the calling process, and all it starts from now on, to changing files beneath the
 * `count` directories open at `dir_fds` (named `dirs`) and its own /dev/shm, and to writing the
 * devices a shell needs. no_new_privs must be set first. */
int confine_writes(const int *dir_fds, const char *const *dirs, int count, const char **call, const char **object);

/* Puts the calling process, and all it starts from now on, in a Landlock domain of its own where
 * confine_writes does not (writes to / allowed): a process in a domain can trace, pidfd_getfd,
 * process_vm_readv or read /proc/PID/{mem,environ,fd} of processes in its domain only (the
 * kernel's rule for every domain), and with ABI 6 signal only them and reach only the abstract
 * unix sockets made there (the scopes, which confine_writes sets too). No file access is limited.
 * A kernel without Landlock leaves it out: 0. no_new_privs must be set first. */
int enter_own_domain(const char **call, const char **object);

/* A seccomp filter, for 64- and 32-bit callers, that refuses with EPERM ioctl TIOCSTI and
 * TIOCLINUX (typing into a terminal, whatever the terminal), the keyrings (keyctl, add_key,
 * request_key) and a new user or cgroup namespace (unshare or clone with CLONE_NEWUSER or
 * CLONE_NEWCGROUP); io_uring's calls and
 * clone3 (whose flags a filter cannot read) fail with ENOSYS, as on a kernel without them, so that
 * programs fall back (glibc to clone). no_new_privs must be set first. */
int filter_system_calls(const char **call);

/* filter_system_calls' filter, which also refuses socket() (EACCES) for every domain but AF_UNIX,
 * and the 32-bit socketcall (ENOSYS, whose arguments a filter cannot read): the network cut where
 * no network namespace can be had (the no-namespace sandbox). socketpair, AF_UNIX only, runs. */
int filter_system_calls_without_network(const char **call);

/* For a task that is not sandboxed, in the tasks' user namespace (root there, with its
 * capabilities): a cgroup namespace of its own (unshare or clone with CLONE_NEWCGROUP) fails with
 * EPERM, and clone3 (whose flags a filter cannot read) with ENOSYS, libc then using clone. In a
 * cgroup namespace it owned, a task could mount a cgroup file system of its own, rooted at its
 * cgroups, writable past the read-only mounts it was given: its own limits, the daemon's cgroup,
 * the host's v1 hierarchies where tasks sit at their root (freezer, devices). And clone3's
 * CLONE_INTO_CGROUP starts a child in any cgroup the caller can open, read-only mount or not.
 * Docker's default seccomp profile refuses clone3 the same way. */
int refuse_cgroup_escapes(const char **call);

/* The deepest kernel interface mount whose point is `path` or holds it (`path` absolute, its
 * symlinks resolved): one of proc, sysfs, cgroupfs and the other file systems through which a
 * process changes the kernel rather than files, or the mount at /dev. Fills its point and type and
 * returns 1; 0 when there is none; -errno when /proc/self/mountinfo cannot be read. */
int kernel_mount_of(const char *path, char *point, size_t point_size, char *type, size_t type_size);

/* What this kernel (or a seccomp profile around the daemon) lacks of what the sandbox calls, in
 * words ("mount_setattr (Linux 5.12)"), or NULL when it has it all. */
const char *sandbox_kernel_gap(void);

/* A pseudo-terminal of `cols` by `rows` in a devpts instance of its own, mounted nowhere yet: the
 * task's leader attaches it as its /dev/pts (confine_mounts). Fills the mount's fd, the master's
 * and the terminal's number in the instance (its slave is the mount's entry of that name). */
int open_detached_terminal(int cols, int rows, int *mount_fd, int *master_fd, int *number, const char **call);

#endif
