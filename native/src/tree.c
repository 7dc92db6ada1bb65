/* Finding and signalling what a task started: by descent from the shim (which, as subreaper,
 * inherits every orphan of its subtree) or by cgroup membership. */
#define _GNU_SOURCE
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse.h"
#include "sys.h"

/* A process that exits while it is looked at: its /proc files vanish or read as empty. */
static int is_gone(int err) { return err == -ENOENT || err == -ESRCH; }

/* Reads `path` (relative to `dir`, a directory fd or AT_FDCWD) into `buffer`, NUL-terminated: its
 * length, or -errno (-ESRCH when it reads as empty: a /proc file of a process that is gone). */
static int read_file_at(int dir, const char *path, char *buffer, size_t size) {
  int length = read_small_file(dir, path, buffer, size);
  return length == 0 ? -ESRCH : length;
}

/* Reads /proc/PID/NAME into `buffer` (NUL-terminated): its length, or -errno (-ESRCH once gone). */
static int read_proc_file(pid_t pid, const char *name, char *buffer, size_t size) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/%s", pid, name);
  return read_file_at(AT_FDCWD, path, buffer, size);
}

/* The last pid of the NSpid line in a /proc/PID/status text (the pid in that process's own
 * namespace), or -EINVAL. */
static pid_t innermost_pid(const char *status) {
  const char *line = strstr(status, "\nNSpid:");
  if (line == NULL) return -EINVAL;
  line += strlen("\nNSpid:");
  const char *end = line + strcspn(line, "\n");
  while (end > line && (end[-1] == ' ' || end[-1] == '\t')) end--;
  const char *last = end;
  while (last > line && last[-1] >= '0' && last[-1] <= '9') last--;
  return last < end ? (pid_t)strtol(last, NULL, 10) : -EINVAL;
}

pid_t outer_pid_of_child(int proc_fd, pid_t child, const char **call) {
  char self[32], path[96], children[4096], status[4096];
  *call = "readlinkat self (the outer /proc)";
  ssize_t length = readlinkat(proc_fd, "self", self, sizeof self - 1);
  if (length < 0) return -errno;
  self[length] = '\0';
  snprintf(path, sizeof path, "%s/task/%s/children", self, self);
  *call = "read self/task/self/children (the outer /proc)";
  int got = read_file_at(proc_fd, path, children, sizeof children);
  if (got < 0) return got == -ESRCH ? 0 : got;
  *call = "read PID/status (the outer /proc)";
  for (char *cursor = children, *next; *cursor != '\0'; cursor = next) {
    long pid = strtol(cursor, &next, 10);
    if (next == cursor) break;
    snprintf(path, sizeof path, "%ld/status", pid);
    if (read_file_at(proc_fd, path, status, sizeof status) > 0 && innermost_pid(status) == child) return (pid_t)pid;
  }
  return 0;
}

/* The parent pid from the stat file at `path` (relative to `dir`), or -errno (-ESRCH for a zombie).
 * The name field may hold spaces and parentheses, so parse after the last ')'. */
static pid_t read_parent_at(int dir, const char *path, const char **call) {
  char buffer[1024];
  int length = read_file_at(dir, path, buffer, sizeof buffer);
  *call = "read /proc/PID/stat";
  if (length < 0) return length;
  char *end = strrchr(buffer, ')');
  char state;
  int ppid;
  *call = "parse /proc/PID/stat";
  if (end == NULL || sscanf(end + 1, " %c %d", &state, &ppid) != 2) return -EINVAL;
  return state == 'Z' ? -ESRCH : ppid;
}

static pid_t read_parent_pid(pid_t pid, const char **call) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  return read_parent_at(AT_FDCWD, path, call);
}

struct process_list {
  pid_t *pids;
  pid_t *parents;
  size_t count;
  size_t capacity;
};

static int list_append(struct process_list *list, pid_t pid, pid_t parent, const char **call) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 256;
    *call = "realloc process list";
    pid_t *pids = realloc(list->pids, capacity * sizeof *pids);
    if (pids == NULL) return -ENOMEM;
    list->pids = pids;
    pid_t *parents = realloc(list->parents, capacity * sizeof *parents);
    if (parents == NULL) return -ENOMEM;
    list->parents = parents;
    list->capacity = capacity;
  }
  list->pids[list->count] = pid;
  list->parents[list->count] = parent;
  list->count++;
  return 0;
}

/* Every living process with its parent. */
static int list_processes(struct process_list *list, const char **call) {
  *call = "opendir /proc";
  DIR *proc = opendir("/proc");
  if (proc == NULL) return -errno;
  int err = 0;
  while (err == 0) {
    errno = 0;
    struct dirent *entry = readdir(proc);
    if (entry == NULL) {
      if (errno != 0) *call = "readdir /proc";
      err = -errno;
      break;
    }
    long pid;
    if (parse_decimal(entry->d_name, 1, INT_MAX, &pid) != 0) continue; /* not a process */
    const char *failed = NULL;
    pid_t parent = read_parent_pid((pid_t)pid, &failed);
    /* A process whose stat cannot be read (gone, or hidden by hidepid) is no task's to signal: skip it. */
    if (parent < 0) continue;
    err = list_append(list, (pid_t)pid, parent, call);
  }
  closedir(proc);
  return err;
}

/* Where `pid` is in `list`, through `table` (an open-addressing table of `slots` entries, each an
 * index + 1, 0 when empty): the index + 1, or 0 when it is not there. */
static size_t find_pid(const struct process_list *list, const size_t *table, size_t slots, pid_t pid) {
  for (size_t slot = (size_t)pid % slots; table[slot] != 0; slot = (slot + 1) % slots) {
    if (list->pids[table[slot] - 1] == pid) return table[slot];
  }
  return 0;
}

#define DESCENDANT 1
#define OTHER 2

/* Marks each process of `list` DESCENDANT of `root` or OTHER in `marks` (zeroed, one per
 * process). An ancestry is walked only up to its first ancestor already marked, and each process
 * is marked once, so the whole list costs time linear in its size. 0, or -ENOMEM. */
static int mark_descendants(const struct process_list *list, pid_t root, unsigned char *marks) {
  size_t slots = 2 * list->count + 1;
  size_t *table = calloc(slots, sizeof *table), *path = malloc((list->count + 1) * sizeof *path);
  int err = table == NULL || path == NULL ? -ENOMEM : 0;
  for (size_t i = 0; err == 0 && i < list->count; i++) {
    size_t slot = (size_t)list->pids[i] % slots;
    while (table[slot] != 0) slot = (slot + 1) % slots;
    table[slot] = i + 1;
  }
  for (size_t i = 0; err == 0 && i < list->count; i++) {
    size_t depth = 0, at = i;
    unsigned char mark = marks[i];
    while (mark == 0) {
      path[depth++] = at;
      pid_t parent = list->parents[at];
      size_t found = parent == root || parent <= 1 || depth > list->count ? 0 : find_pid(list, table, slots, parent);
      if (found == 0) mark = parent == root ? DESCENDANT : OTHER;
      else if (marks[found - 1] != 0) mark = marks[found - 1];
      else at = found - 1;
    }
    while (depth > 0) marks[path[--depth]] = mark;
  }
  free(table);
  free(path);
  return err;
}

/* A pidfd for `pid`, or -errno (-ESRCH when it is gone). */
static int open_pidfd(pid_t pid, const char **call) {
  int pidfd = sys_pidfd_open(pid);
  *call = "pidfd_open";
  return pidfd >= 0 ? pidfd : -errno;
}

/* Sends `sig` through `pidfd`: 1, 0 when the process is gone, or -errno. */
static int send_signal(int pidfd, int sig, const char **call) {
  if (sys_pidfd_send_signal(pidfd, sig) == 0) return 1;
  *call = "pidfd_send_signal";
  return errno == ESRCH ? 0 : -errno;
}

/* Opens /proc/PID (which pidfd_send_signal takes as it takes a pidfd), then checks through it that
 * the process still has `parent` as parent: if the pid was reused before the open, the check fails;
 * after it, the fd names the process that is gone. Pids as the mounted /proc numbers them, which is
 * not this process's PID namespace where the tasks' init was refused a /proc of its own. */
static int signal_checked(pid_t pid, pid_t parent, int sig, const char **call) {
  char path[32];
  snprintf(path, sizeof path, "/proc/%d", pid);
  int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  *call = "open /proc/PID";
  if (dir < 0) return errno == ENOENT ? 0 : -errno;
  pid_t now = read_parent_at(dir, "stat", call);
  int result = now == parent ? send_signal(dir, sig, call) : now < 0 && !is_gone(now) ? now : 0;
  close(dir);
  return result;
}

/* This process's pid as the mounted /proc numbers it (its own PID namespace's, or an outer one's), or -errno. */
static pid_t own_proc_pid(const char **call) {
  char self[32];
  *call = "readlink /proc/self";
  ssize_t length = readlink("/proc/self", self, sizeof self - 1);
  if (length <= 0) return length < 0 ? -errno : -EINVAL;
  self[length] = '\0';
  long pid;
  return parse_decimal(self, 1, INT_MAX, &pid) == 0 ? (pid_t)pid : -EINVAL;
}

int signal_descendants(int sig, const char **call) {
  struct process_list list = {0};
  pid_t root = own_proc_pid(call);
  int err = root < 0 ? root : list_processes(&list, call);
  unsigned char *marks = err == 0 ? calloc(list.count + 1, 1) : NULL;
  if (err == 0 && (marks == NULL || mark_descendants(&list, root, marks) < 0)) {
    *call = "calloc the descendants' marks";
    err = -ENOMEM;
  }
  int sent = 0, first_failure = 0;
  /* A process that cannot be signalled does not keep the others from their signal. */
  for (size_t i = 0; err == 0 && i < list.count; i++) {
    if (list.pids[i] == root || marks[i] != DESCENDANT) continue;
    const char *failed = NULL;
    int result = signal_checked(list.pids[i], list.parents[i], sig, &failed);
    if (result >= 0) sent += result;
    else if (first_failure == 0) {
      first_failure = result;
      *call = failed;
    }
  }
  if (err == 0) err = first_failure;
  free(marks);
  free(list.pids);
  free(list.parents);
  return err < 0 ? err : sent;
}

/* Opens `dir`/`name` with `flags` (and O_CLOEXEC): the fd, or -errno. */
static int open_in(const char *dir, const char *name, int flags) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return -ENAMETOOLONG;
  int fd = open(path, flags | O_CLOEXEC);
  return fd >= 0 ? fd : -errno;
}

static int write_file(const char *dir, const char *name, const char *text, const char **call) {
  *call = "open";
  int fd = open_in(dir, name, O_WRONLY);
  if (fd < 0) return fd;
  *call = "write";
  size_t length = strlen(text);
  ssize_t written = write(fd, text, length);
  int err = written < 0 ? -errno : (size_t)written < length ? -EIO : 0;
  close(fd);
  return err;
}

int kill_cgroup(const char *dir, const char **call) { return write_file(dir, "cgroup.kill", "1", call); }

int open_cgroup_events(const char *dir, const char **call) {
  *call = "open";
  return open_in(dir, "cgroup.events", O_RDONLY);
}

int cgroup_populated(int events_fd) {
  char text[128];
  ssize_t length = pread(events_fd, text, sizeof text - 1, 0);
  if (length < 0) return -errno;
  text[length] = '\0';
  /* "populated 0|1\nfrozen 0|1\n"; a file without the line (never seen) counts as empty. */
  const char *line = strstr(text, "populated ");
  return line != NULL && (line == text || line[-1] == '\n') && line[10] == '1';
}

int join_cgroup(const char *dir, const char **call) { return write_file(dir, "cgroup.procs", "0", call); }

/* 1 when /proc/PID/cgroup names the cgroup whose folder is `dir` (compared by its tail), 0 when it
 * does not or the process is gone, or -errno. */
static int in_cgroup(pid_t pid, const char *dir, const char **call) {
  char buffer[2 * PATH_MAX];
  int length = read_proc_file(pid, "cgroup", buffer, sizeof buffer);
  *call = "read /proc/PID/cgroup";
  if (length < 0) return is_gone(length) ? 0 : length;
  const char *line = strstr(buffer, "0::");
  while (line != NULL && line != buffer && line[-1] != '\n') line = strstr(line + 1, "0::");
  if (line == NULL) return 0;
  size_t own = strcspn(line + 3, "\n"), full = strlen(dir);
  return own > 0 && full >= own && strncmp(dir + full - own, line + 3, own) == 0;
}

/* Signals `pid` if it is still in `dir`'s cgroup: 1, 0 when it is not (or gone), or -errno. */
static int signal_member(pid_t pid, const char *dir, int sig, const char **call) {
  int pidfd = open_pidfd(pid, call);
  if (pidfd < 0) return is_gone(pidfd) ? 0 : pidfd;
  int result = in_cgroup(pid, dir, call);
  if (result == 1) result = send_signal(pidfd, sig, call);
  close(pidfd);
  return result;
}

int signal_cgroup(const char *dir, int sig, const char **call) {
  char path[PATH_MAX], named[PATH_MAX];
  *call = "open cgroup.procs";
  if (snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= (int)sizeof path) return -ENAMETOOLONG;
  FILE *procs = fopen(path, "re");
  if (procs == NULL) return -errno;
  /* A folder given as /proc/self/fd/N (shim.c) is compared with /proc/PID/cgroup by the path it leads to. */
  ssize_t length = readlink(dir, named, sizeof named - 1);
  if (length > 0) named[length] = '\0';
  if (length > 0) dir = named;
  int sent = 0, err = 0, pid;
  while (fscanf(procs, "%d", &pid) == 1) {
    const char *failed = NULL;
    int result = signal_member(pid, dir, sig, &failed);
    if (result >= 0) sent += result;
    else if (err == 0) {
      err = result;
      *call = failed;
    }
  }
  if (err == 0 && ferror(procs)) {
    err = errno != 0 ? -errno : -EIO;
    *call = "read cgroup.procs";
  } else if (err == 0 && !feof(procs)) {
    err = -EINVAL;
    *call = "parse cgroup.procs";
  }
  fclose(procs);
  return err < 0 ? err : sent;
}
