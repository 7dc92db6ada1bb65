/* Small system-call helpers the addon, the spawner and the shim share: the pidfd calls through
 * syscall(2) (glibc wraps them only from 2.36, and the build must not depend on it), the numbers of
 * the other calls it wraps late, the drain of a non-blocking signalfd, and one read of a small file. */
#ifndef HIVE_SYS_H
#define HIVE_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/signalfd.h>
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
/* The new mount API and openat2, whose numbers are the same on every architecture. */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#define SYS_move_mount 429
#define SYS_fsopen 430
#define SYS_fsconfig 431
#define SYS_fsmount 432
#endif
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif

/* The new mount API's flags, spelled here: glibc has them only from 2.36. */
#define TREE_CLONE 1 /* OPEN_TREE_CLONE */
#define TREE_RECURSIVE 0x8000 /* AT_RECURSIVE */
#define MOVE_FROM_FD 0x4 /* MOVE_MOUNT_F_EMPTY_PATH */
#define MOVE_TO_FD 0x40 /* MOVE_MOUNT_T_EMPTY_PATH */
#define ATTR_RDONLY 0x1
#define ATTR_NOSUID 0x2
#define ATTR_NODEV 0x4
#define ATTR_NOEXEC 0x8

static inline int sys_pidfd_open(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

static inline int sys_pidfd_send_signal(int pidfd, int sig) {
  return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Reads all that the non-blocking signalfd `fd` holds (its signals are counted elsewhere, by
 * waitpid): 0, or -errno. */
static inline int drain_signalfd(int fd) {
  struct signalfd_siginfo info;
  ssize_t got;
  while ((got = read(fd, &info, sizeof info)) > 0) {
  }
  return got < 0 && errno != EAGAIN && errno != EINTR ? -errno : 0;
}

/* Reads `path` (relative to `dir`, a directory fd or AT_FDCWD) into `buffer` with one read(2),
 * NUL-terminated: its length (0 for an empty file), or -errno. For /proc and the like. */
static inline int read_small_file(int dir, const char *path, char *buffer, size_t size) {
  int fd = openat(dir, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t length = read(fd, buffer, size - 1);
  int err = length < 0 ? -errno : 0;
  close(fd);
  if (err < 0) return err;
  buffer[length] = '\0';
  return (int)length;
}

#endif
