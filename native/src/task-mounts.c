/* See task-mounts.h. */
#define _GNU_SOURCE
#include "task-mounts.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>

/* What of /proc changes the whole host, read-only as container runtimes mount it: sysctls (a
 * core_pattern of `|PROGRAM` is run by the kernel as root on the host), the magic SysRq keys, IRQ
 * affinities, bus devices. */
static const char *const READ_ONLY_PROC[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};

/* An empty read-only folder: nothing in it, nor renamed into it, shows inside. */
#define EMPTY_DIR_OPTIONS "mode=0555,size=4k"
#define EMPTY_DIR_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* A mount beneath the old /proc, and how it is made again over the new one: a bind of proc itself
 * (read-only, as /proc/sys in a container) again as a read-only bind, any other directory as an
 * empty tmpfs, any other file as /dev/null (a container's masks: /proc/acpi, /proc/kcore). */
enum mask_kind { MASK_READ_ONLY, MASK_EMPTY_DIR, MASK_NULL_FILE };
struct proc_mask {
  char path[PATH_MAX];
  enum mask_kind kind;
};
#define MAX_PROC_MASKS 64
static struct proc_mask masks[MAX_PROC_MASKS];

/* A read-only bind of `path` onto itself, with what is mounted beneath it. */
static int bind_read_only(const char *path, const char **call) {
  *call = "mount --rbind";
  if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) != 0) return -errno;
  *call = "mount -o remount,bind,ro";
  return mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0 ? 0 : -errno;
}

/* /dev/null bound read-only over the file at `path`: it reads as empty, and its mode and owner (the
 * device's) cannot be changed through it. */
static int cover_file(const char *path, const char **call) {
  *call = "mount --bind /dev/null";
  if (mount("/dev/null", path, NULL, MS_BIND, NULL) != 0) return -errno;
  *call = "mount -o remount,bind,ro";
  return mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, NULL) == 0 ? 0 : -errno;
}

static int cover_dir(const char *path, const char **call) {
  *call = "mount tmpfs -o ro";
  return mount("tmpfs", path, "tmpfs", EMPTY_DIR_FLAGS, EMPTY_DIR_OPTIONS) == 0 ? 0 : -errno;
}

/* The mounts beneath /proc in /proc/self/mountinfo, each with its kind; their count, or -errno. */
static int read_proc_masks(void) {
  FILE *info = fopen("/proc/self/mountinfo", "re");
  if (info == NULL) return -errno;
  char line[2 * PATH_MAX], point[PATH_MAX], type[64];
  int count = 0;
  while (count < MAX_PROC_MASKS && fgets(line, sizeof line, info) != NULL) {
    const char *separator = strstr(line, " - ");
    if (separator == NULL || sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1 || sscanf(separator, " - %63s", type) != 1) continue;
    if (strncmp(point, "/proc/", 6) != 0 || strchr(point, '\\') != NULL) continue; /* escaped names: none of a runtime's */
    struct stat status;
    if (stat(point, &status) != 0) continue;
    struct proc_mask *mask = &masks[count++];
    snprintf(mask->path, sizeof mask->path, "%s", point);
    mask->kind = strcmp(type, "proc") == 0 ? MASK_READ_ONLY : S_ISDIR(status.st_mode) ? MASK_EMPTY_DIR : MASK_NULL_FILE;
  }
  fclose(info);
  return count;
}

/* A /proc of this PID namespace over /proc, with the old one's masks made again; `*refused` set,
 * and the old /proc kept, where the kernel refuses it (EPERM: it would show what a mask hides). */
static int mount_own_proc(int *refused, const char **call, const char **object) {
  *object = "/proc";
  *call = "read /proc/self/mountinfo";
  int count = read_proc_masks();
  if (count < 0) return count;
  *call = "mount proc";
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
    if (errno != EPERM) return -errno;
    *refused = errno;
    return 0;
  }
  for (int i = 0; i < count; i++) {
    *object = masks[i].path;
    int err = masks[i].kind == MASK_READ_ONLY ? bind_read_only(masks[i].path, call)
              : masks[i].kind == MASK_EMPTY_DIR ? cover_dir(masks[i].path, call)
                                                : cover_file(masks[i].path, call);
    if (err < 0 && err != -ENOENT) return err; /* ENOENT: not in this /proc */
  }
  return 0;
}

/* Each of `list` guarded by `guard`. */
static int guard_each(const struct path_list *list, int (*guard)(const char *, const char **), const char **call, const char **object) {
  for (int i = 0; i < list->count; i++) {
    *object = list->paths[i];
    int err = guard(list->paths[i], call);
    if (err < 0) return err;
  }
  return 0;
}

int set_up_task_mounts(const struct task_mounts *plan, int *proc_refused, const char **call, const char **object) {
  *object = "/";
  *call = "mount --make-rslave";
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) return -errno;
  int err = mount_own_proc(proc_refused, call, object);
  for (size_t i = 0; err == 0 && i < sizeof READ_ONLY_PROC / sizeof *READ_ONLY_PROC; i++) {
    *object = READ_ONLY_PROC[i];
    err = bind_read_only(READ_ONLY_PROC[i], call);
    if (err == -ENOENT) err = 0; /* not in this kernel */
  }
  if (err == 0) err = guard_each(&plan->read_only, bind_read_only, call, object);
  if (err == 0) err = guard_each(&plan->hidden_files, cover_file, call, object);
  if (err == 0) err = guard_each(&plan->hidden_dirs, cover_dir, call, object);
  return err;
}
