/* Thin wrappers for the pidfd system calls that glibc 2.36 does not wrap. */
#ifndef HIVE_SYS_H
#define HIVE_SYS_H

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

static inline int sys_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

static inline int sys_pidfd_send_signal(int pidfd, int sig) {
  return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

#endif
