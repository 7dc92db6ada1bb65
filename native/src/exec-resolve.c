/* An exec's file, found as its process sees it (exec-resolve.h): a walk of the path one name at a
 * time through O_PATH fds, from the process's root, cwd or fd as the shim reaches them in /proc. */
#define _GNU_SOURCE
#include "exec-resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
/* The inode of a procfs's root directory, where "self" and "thread-self" are. */
#define PROC_ROOT_INO 1

/* The thread a walk resolves for: its root (an fd), its process (0 until a walk needs it) and its
 * own id, and the links followed. */
struct walk {
  int root;
  pid_t tgid, tid;
  int links;
};

static int open_proc(const char *format, pid_t pid) {
  char name[64];
  snprintf(name, sizeof name, format, (int)pid);
  int fd = open(name, O_PATH | O_CLOEXEC);
  return fd < 0 ? -errno : fd;
}

/* The process (thread group) of thread `tid`, from its /proc status: its id, or -errno. */
static pid_t thread_group(pid_t tid) {
  char name[64], line[128];
  snprintf(name, sizeof name, "/proc/%d/status", (int)tid);
  FILE *status = fopen(name, "re");
  if (status == NULL) return -errno;
  long tgid = -ESRCH;
  while (fgets(line, sizeof line, status) != NULL) {
    if (sscanf(line, "Tgid: %ld", &tgid) == 1) break;
  }
  fclose(status);
  return (pid_t)tgid;
}

static int same_file(int a, int b) {
  struct stat one, two;
  return fstat(a, &one) == 0 && fstat(b, &two) == 0 && one.st_dev == two.st_dev && one.st_ino == two.st_ino;
}

/* Whether `fd` is a procfs's root directory. */
static int is_proc_root(int fd) {
  struct statfs fs;
  struct stat st;
  return fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC && fstat(fd, &st) == 0 && st.st_ino == PROC_ROOT_INO;
}

static int walk_path(struct walk *walk, int at, const char *path);

/* Follows symlink `link`, named `name` in directory `dir`: an O_PATH fd of where it leads, or
 * -errno. Procfs's "self" and "thread-self" lead to the walk's thread; its other links at its root
 * ("mounts", "net") are read as text; those below (/proc/PID/fd/N, cwd, exe, root) are the
 * kernel's to follow, and lead to the same file whoever follows them. */
static int follow(struct walk *walk, int dir, int link, const char *name) {
  if (++walk->links > RESOLVE_MAX_LINKS) return -ELOOP;
  struct statfs fs;
  if (fstatfs(link, &fs) != 0) return -errno;
  if (fs.f_type == PROC_SUPER_MAGIC) {
    if (!is_proc_root(dir)) {
      int fd = openat(dir, name, O_PATH | O_CLOEXEC);
      return fd < 0 ? -errno : fd;
    }
    if (strcmp(name, "self") == 0) {
      if (walk->tgid == 0) walk->tgid = thread_group(walk->tid);
      return walk->tgid < 0 ? walk->tgid : open_proc("/proc/%d", walk->tgid);
    }
    if (strcmp(name, "thread-self") == 0) return open_proc("/proc/%d", walk->tid);
  }
  char target[PATH_MAX];
  ssize_t length = readlinkat(link, "", target, sizeof target);
  if (length < 0) return -errno;
  if ((size_t)length == sizeof target) return -ENAMETOOLONG;
  target[length] = '\0';
  return walk_path(walk, dir, target);
}

/* One step of a walk from directory `dir`: `name`, followed if a symlink (an exec follows them
 * all, the last one too). An O_PATH fd, or -errno. */
static int step(struct walk *walk, int dir, const char *name) {
  /* ".." does not climb above the thread's root. */
  if (strcmp(name, "..") == 0 && same_file(dir, walk->root)) name = ".";
  int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -errno;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISLNK(st.st_mode)) return fd;
  int next = follow(walk, dir, fd, name);
  close(fd);
  return next;
}

/* Walks `path` from directory fd `at` (from the thread's root where it is absolute): an O_PATH fd
 * of the file it names, or -errno. */
static int walk_path(struct walk *walk, int at, const char *path) {
  int fd = fcntl(path[0] == '/' ? walk->root : at, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return -errno;
  for (const char *name = path; *name != '\0';) {
    size_t length = strcspn(name, "/");
    if (length > NAME_MAX) {
      close(fd);
      return -ENAMETOOLONG;
    }
    if (length > 0) {
      char component[NAME_MAX + 1];
      memcpy(component, name, length);
      component[length] = '\0';
      int next = step(walk, fd, component);
      close(fd);
      if (next < 0) return next;
      fd = next;
    }
    name += length + (name[length] == '/');
  }
  return fd;
}

int resolve_as_task(pid_t tid, int dirfd, int empty_path, const char *path, char *real, size_t size) {
  if (path[0] == '\0' && !empty_path) return -ENOENT;
  struct walk walk = {.tid = tid};
  if ((walk.root = open_proc("/proc/%d/root", tid)) < 0) return walk.root;
  int start = dirfd == AT_FDCWD ? open_proc("/proc/%d/cwd", tid) : -EBADF;
  if (dirfd != AT_FDCWD) {
    char name[64];
    snprintf(name, sizeof name, "/proc/%d/fd/%d", (int)tid, dirfd);
    start = open(name, O_PATH | O_CLOEXEC);
    if (start < 0) start = -errno;
  }
  int fd = start < 0 ? start : walk_path(&walk, start, path);
  if (start >= 0) close(start);
  close(walk.root);
  if (fd < 0) return fd;
  char link[64];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t length = readlink(link, real, size - 1);
  int err = length < 0 ? -errno : (size_t)length == size - 1 ? -ENAMETOOLONG : 0;
  if (err < 0) {
    close(fd);
    return err;
  }
  real[length] = '\0';
  return fd;
}
