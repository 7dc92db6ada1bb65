/* See userns-map.h. */
#define _GNU_SOURCE
#include "userns-map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "sys.h"

/* Writes `text` to FILE (a map, or setgroups) of the /proc directory open at `dir`: 0 or -errno. */
static int write_proc_file(int dir, const char *file, const char *text) {
  int fd = openat(dir, file, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  size_t length = strlen(text);
  int err = write(fd, text, length) == (ssize_t)length ? 0 : -errno;
  close(fd);
  return err;
}

int write_identity_map(int dir, const char *file) {
  char path[64], own[4096], map[4096];
  snprintf(path, sizeof path, "/proc/self/%s", file);
  int err = read_small_file(AT_FDCWD, path, own, sizeof own);
  if (err < 0) return err;
  size_t used = 0;
  unsigned long inside, outside, count;
  for (char *line = own; line != NULL && sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3; line = strchr(line + 1, '\n')) {
    int wrote = snprintf(map + used, sizeof map - used, "%lu %lu %lu\n", inside, inside, count);
    if (wrote < 0 || (size_t)wrote >= sizeof map - used) return -E2BIG;
    used += (size_t)wrote;
  }
  return write_proc_file(dir, file, map);
}

int map_own_ids(int dir, const char **file) {
  char single[64];
  *file = "uid_map";
  int err = write_identity_map(dir, *file);
  snprintf(single, sizeof single, "0 %u 1\n", (unsigned)geteuid());
  if (err == -EPERM) err = write_proc_file(dir, *file, single);
  if (err < 0) return err;
  *file = "gid_map";
  err = write_identity_map(dir, *file);
  if (err != -EPERM) return err;
  *file = "setgroups";
  if ((err = write_proc_file(dir, *file, "deny")) < 0) return err;
  *file = "gid_map";
  snprintf(single, sizeof single, "0 %u 1\n", (unsigned)getegid());
  return write_proc_file(dir, *file, single);
}

