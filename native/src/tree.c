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

#include "sys.h"

/* The parent pid from /proc/PID/stat, or -1 when the process is gone. The name field may hold
 * spaces and parentheses, so parse after the last ')'. */
static pid_t read_parent_pid(pid_t pid) {
  char path[64], buffer[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t length = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (length <= 0) return -1;
  buffer[length] = '\0';
  char *end = strrchr(buffer, ')');
  char state;
  int ppid;
  if (end == NULL || sscanf(end + 2, "%c %d", &state, &ppid) != 2) return -1;
  return state == 'Z' ? -1 : ppid;
}

struct process_list {
  pid_t *pids;
  pid_t *parents;
  size_t count;
  size_t capacity;
};

static int list_append(struct process_list *list, pid_t pid, pid_t parent) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? list->capacity * 2 : 256;
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
static int list_processes(struct process_list *list) {
  DIR *proc = opendir("/proc");
  if (proc == NULL) return -errno;
  struct dirent *entry;
  int err = 0;
  while (err == 0 && (entry = readdir(proc)) != NULL) {
    char *end;
    long pid = strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    pid_t parent = read_parent_pid((pid_t)pid);
    if (parent >= 0) err = list_append(list, (pid_t)pid, parent);
  }
  closedir(proc);
  return err;
}

static int is_descendant(const struct process_list *list, size_t index, pid_t root) {
  pid_t parent = list->parents[index];
  for (size_t depth = 0; depth < list->count && parent > 1; depth++) {
    if (parent == root) return 1;
    size_t next = list->count;
    for (size_t i = 0; i < list->count; i++) {
      if (list->pids[i] == parent) {
        next = i;
        break;
      }
    }
    if (next == list->count) return 0;
    parent = list->parents[next];
  }
  return parent == root;
}

/* Opens a pidfd for `pid`, then checks that the process it names still has `parent` as parent:
 * if the pid was reused in between, the check fails (or the pidfd names a dead process). */
static int signal_checked(pid_t pid, pid_t parent, int sig) {
  int pidfd = sys_pidfd_open(pid);
  if (pidfd < 0) return 0;
  int sent = 0;
  if (read_parent_pid(pid) == parent && sys_pidfd_send_signal(pidfd, sig) == 0) sent = 1;
  close(pidfd);
  return sent;
}

int signal_descendants(pid_t root, int sig) {
  struct process_list list = {0};
  int err = list_processes(&list);
  int sent = 0;
  for (size_t i = 0; err == 0 && i < list.count; i++) {
    if (list.pids[i] != root && is_descendant(&list, i, root)) sent += signal_checked(list.pids[i], list.parents[i], sig);
  }
  free(list.pids);
  free(list.parents);
  return err < 0 ? err : sent;
}

static int write_file(const char *dir, const char *name, const char *text) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return -ENAMETOOLONG;
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t written = write(fd, text, strlen(text));
  int err = written < 0 ? -errno : 0;
  close(fd);
  return err;
}

int kill_cgroup(const char *dir) { return write_file(dir, "cgroup.kill", "1"); }

int join_cgroup(const char *dir) { return write_file(dir, "cgroup.procs", "0"); }

/* True when /proc/PID/cgroup names the cgroup whose folder is `dir` (compared by its tail). */
static int in_cgroup(pid_t pid, const char *dir) {
  char path[64], line[PATH_MAX + 16];
  snprintf(path, sizeof path, "/proc/%d/cgroup", pid);
  FILE *file = fopen(path, "re");
  if (file == NULL) return 0;
  int member = 0;
  while (!member && fgets(line, sizeof line, file) != NULL) {
    if (strncmp(line, "0::", 3) != 0) continue;
    line[strcspn(line, "\n")] = '\0';
    size_t own = strlen(line + 3), full = strlen(dir);
    member = own > 0 && full >= own && strcmp(dir + full - own, line + 3) == 0;
  }
  fclose(file);
  return member;
}

int signal_cgroup(const char *dir, int sig) {
  char path[PATH_MAX];
  if (snprintf(path, sizeof path, "%s/cgroup.procs", dir) >= (int)sizeof path) return -ENAMETOOLONG;
  FILE *procs = fopen(path, "re");
  if (procs == NULL) return -errno;
  int sent = 0, pid;
  while (fscanf(procs, "%d", &pid) == 1) {
    int pidfd = sys_pidfd_open(pid);
    if (pidfd < 0) continue;
    if (in_cgroup(pid, dir) && sys_pidfd_send_signal(pidfd, sig) == 0) sent++;
    close(pidfd);
  }
  fclose(procs);
  return sent;
}
