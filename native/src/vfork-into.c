/* vfork_into_cgroup (vfork-into.h). glibc exports no clone3 wrapper, and syscall(2) cannot start a
 * child on another stack (it would return through a frame the child no longer has), so the call
 * and the child's first steps are a few lines of assembly, as glibc's own clone is. */
#define _GNU_SOURCE
#include "vfork-into.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)

#ifndef SYS_clone3
#define SYS_clone3 435
#endif

/* clone3's argument as of Linux 5.7 (CLONE_ARGS_SIZE_VER2), spelled here: older headers lack it. */
struct clone_args_v2 {
  uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};
#define CLONE_INTO_CGROUP_FLAG 0x200000000ULL

/* clone3(args); in the child (on args->stack, 16-byte aligned at its top) calls child(arg) and exits
 * with its result. Returns the child's pid or -errno in the caller. r12 and r13 survive the system
 * call in both processes (only rax, rcx and r11 change). */
static long clone3_running(struct clone_args_v2 *args, int (*child)(void *), void *arg) {
  register long entry __asm__("r12") = (long)child;
  register long data __asm__("r13") = (long)arg;
  long result;
  __asm__ volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xor %%ebp, %%ebp\n\t"
      "mov %%r13, %%rdi\n\t"
      "call *%%r12\n\t"
      "mov %%eax, %%edi\n\t"
      "mov %[exit], %%eax\n\t"
      "syscall\n\t"
      "hlt\n"
      "1:"
      : "=a"(result)
      : "0"((long)SYS_clone3), "D"(args), "S"(sizeof *args), "r"(entry), "r"(data), [exit] "i"(SYS_exit)
      : "rcx", "r11", "memory", "cc");
  return result;
}

/* clone3 into the cgroup with `flags` (CLONE_VM | CLONE_VFORK, or none), the child on a stack of
 * its own, which the caller unmaps once clone3 returns: after the child's exec with CLONE_VFORK,
 * else at once (the child has its copy). */
static pid_t clone_into_cgroup(uint64_t flags, int cgroup_fd, size_t stack_bytes, int (*child)(void *), void *arg) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  size_t mapped = (stack_bytes + page - 1) / page * page + page;
  void *stack = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED) return -errno;
  /* A guard page at the bottom: an overflow faults instead of writing past the mapping. */
  if (mprotect(stack, page, PROT_NONE) != 0) {
    int err = errno;
    munmap(stack, mapped);
    return -err;
  }
  struct clone_args_v2 args;
  memset(&args, 0, sizeof args);
  args.flags = flags | CLONE_INTO_CGROUP_FLAG;
  args.exit_signal = SIGCHLD;
  args.stack = (uint64_t)(uintptr_t)stack;
  args.stack_size = mapped;
  args.cgroup = (uint64_t)cgroup_fd;
  long pid = clone3_running(&args, child, arg);
  munmap(stack, mapped);
  return (pid_t)pid;
}

pid_t vfork_into_cgroup(int cgroup_fd, size_t stack_bytes, int (*child)(void *), void *arg) {
  return clone_into_cgroup(CLONE_VM | CLONE_VFORK, cgroup_fd, stack_bytes, child, arg);
}

pid_t fork_into_cgroup(int cgroup_fd, size_t stack_bytes, int (*child)(void *), void *arg) {
  return clone_into_cgroup(0, cgroup_fd, stack_bytes, child, arg);
}

#else

pid_t fork_into_cgroup(int cgroup_fd, size_t stack_bytes, int (*child)(void *), void *arg) {
  (void)cgroup_fd;
  (void)stack_bytes;
  (void)child;
  (void)arg;
  return -ENOSYS;
}

pid_t vfork_into_cgroup(int cgroup_fd, size_t stack_bytes, int (*child)(void *), void *arg) {
  (void)cgroup_fd;
  (void)stack_bytes;
  (void)child;
  (void)arg;
  return -ENOSYS;
}

#endif
