/* A vfork whose child starts in a cgroup v2 folder (clone3 with CLONE_INTO_CGROUP, Linux 5.7+),
 * instead of joining it by writing its cgroup.procs: that write takes the kernel's global
 * cgroup_threadgroup_rwsem for writing, which waits out an RCU grace period unless another write
 * came within the last one. Measured on this project's machines: a task's leader started after a
 * pause of 15 ms or more took 10 to 20 ms to join its cgroup that way, under 0.5 ms when created in
 * it; a `run` after a pause of 50 ms, p50, 6.9 to 8.5 ms with this against 18.3 to 21.0 without
 * (bench/README.md, "What each trick buys", 2026-12-08). */
#ifndef HIVE_VFORK_INTO_H
#define HIVE_VFORK_INTO_H

#include <sys/types.h>

/* Runs `child(arg)` in a new process created in the cgroup v2 folder open as `cgroup_fd`, which
 * shares this process's memory until it execs or exits, as a vfork child does (the caller resumes
 * only then), on a stack of its own of `stack_bytes` (rounded up to pages; a guard page below).
 * `child` must exec or _exit, never return (its return value would end the process as its exit
 * code); no signal handler may run in it (block them first). Returns the child's pid, or -errno:
 * -ENOSYS where this build has no clone3 path (x86-64 only) or the kernel or a seccomp filter
 * refuses clone3, -E2BIG (Linux 5.3 to 5.6) or -EINVAL where the kernel knows no
 * CLONE_INTO_CGROUP, -EBADF where the folder is not a cgroup v2 one. The caller then joins the
 * cgroup the old way. */
pid_t vfork_into_cgroup(int cgroup_fd, size_t stack_bytes, int (*child)(void *), void *arg);

/* The same as a fork: the child runs `child(arg)` on a copy of this process's memory (on a stack of
 * `stack_bytes` as above), and the caller goes on at once. The same errors. */
pid_t fork_into_cgroup(int cgroup_fd, size_t stack_bytes, int (*child)(void *), void *arg);

#endif
