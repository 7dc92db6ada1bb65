/* See task-mounts.h. */
#define _GNU_SOURCE
#include "task-mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

/* What of /proc changes the whole host, read-only as container runtimes mount it: sysctls (a
 * core_pattern of `|PROGRAM` is run by the kernel as root on the host), the magic SysRq keys, IRQ
 * affinities, bus devices. */
static const char *const READ_ONLY_PROC[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};

/* An empty read-only folder: nothing in it, nor renamed into it, shows inside. */
#define EMPTY_DIR_OPTIONS "mode=0555,size=4k"
#define EMPTY_DIR_FLAGS (MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)

/* How a mount beneath the old /proc is made again over the new one: a bind of proc itself
 * (read-only, as /proc/sys in a container) again as a read-only bind, any other directory as an
 * empty tmpfs, any other file as /dev/null (a container's masks: /proc/acpi, /proc/kcore). */
enum mask_kind { MASK_READ_ONLY, MASK_EMPTY_DIR, MASK_NULL_FILE };

/* A mount of this mount namespace, as /proc/self/mountinfo lists it. */
struct mount_entry {
  char point[PATH_MAX];
  char type[64];
};
#define MAX_MOUNTS 256
static struct mount_entry mounts[MAX_MOUNTS];

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

/* The mounts of this namespace, read once before any is changed (names with escapes, which no
 * runtime makes, left out): their count, or -errno. */
static int read_mounts(void) {
  FILE *info = fopen("/proc/self/mountinfo", "re");
  if (info == NULL) return -errno;
  char line[2 * PATH_MAX];
  int count = 0;
  while (count < MAX_MOUNTS && fgets(line, sizeof line, info) != NULL) {
    struct mount_entry *entry = &mounts[count];
    const char *separator = strstr(line, " - ");
    if (separator == NULL || sscanf(line, "%*s %*s %*s %*s %4095s", entry->point) != 1) continue;
    if (sscanf(separator, " - %63s", entry->type) != 1 || strchr(entry->point, '\\') != NULL) continue;
    count++;
  }
  fclose(info);
  return count;
}

/* How the mount at `entry` is made again over the new /proc; -1 for one not beneath /proc, or gone. */
static int mask_kind_of(const struct mount_entry *entry) {
  struct stat status;
  if (strncmp(entry->point, "/proc/", 6) != 0 || stat(entry->point, &status) != 0) return -1;
  return strcmp(entry->type, "proc") == 0 ? MASK_READ_ONLY : S_ISDIR(status.st_mode) ? MASK_EMPTY_DIR : MASK_NULL_FILE;
}

/* A /proc of this PID namespace over /proc, with the old one's masks made again; `*refused` set,
 * and the old /proc kept, where the kernel refuses it (EPERM: it would show what a mask hides). */
static int mount_own_proc(int count, int *refused, const char **call, const char **object) {
  *object = "/proc";
  *call = "mount proc";
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
    if (errno != EPERM) return -errno;
    *refused = errno;
    return 0;
  }
  for (int i = 0; i < count; i++) {
    int kind = mask_kind_of(&mounts[i]);
    if (kind < 0) continue;
    *object = mounts[i].point;
    int err = kind == MASK_READ_ONLY   ? bind_read_only(mounts[i].point, call)
              : kind == MASK_EMPTY_DIR ? cover_dir(mounts[i].point, call)
                                       : cover_file(mounts[i].point, call);
    if (err < 0 && err != -ENOENT) return err; /* ENOENT: not in this /proc */
  }
  return 0;
}

/* Every cgroup mount read-only: a task that is root could otherwise freeze or kill the daemon's own
 * cgroup, make folders beside its own and move itself into one, or raise its own limits. The
 * shims reach their tasks' cgroups through folders opened outside this namespace, whose mounts are
 * writable (launch-native.ts passes them as /proc/self/fd/N). */
static int guard_cgroups(int count, const char **call, const char **object) {
  for (int i = 0; i < count; i++) {
    if (strcmp(mounts[i].type, "cgroup") != 0 && strcmp(mounts[i].type, "cgroup2") != 0) continue;
    *object = mounts[i].point;
    int err = bind_read_only(mounts[i].point, call);
    if (err < 0 && err != -ENOENT) return err;
  }
  return 0;
}


/* Makes each folder of `path` from `from` on (the part past its start, inside a fresh tmpfs). */
static int make_folders(const char *path, size_t from) {
  char partial[PATH_MAX];
  if (strlen(path) >= sizeof partial) return -ENAMETOOLONG;
  strcpy(partial, path);
  for (char *slash = strchr(partial + from + 1, '/');; slash = strchr(slash + 1, '/')) {
    if (slash != NULL) *slash = '\0';
    if (mkdir(partial, 0555) != 0 && errno != EEXIST) return -errno;
    if (slash == NULL) return 0;
    *slash = '/';
  }
}

/* `dir` covered by an empty read-only tmpfs but for `shown` beneath it, bound back read-only at its
 * place: tasks read their output files there, and nothing else of the state dir (its registry holds
 * other runs' environments). `shown` is cloned before the cover and moved onto a folder made for it. */
static int show_alone(const char *dir, const char *shown, const char **call) {
  *call = "open_tree OPEN_TREE_CLONE";
  int clone = (int)syscall(SYS_open_tree, AT_FDCWD, shown, TREE_CLONE | TREE_RECURSIVE | O_CLOEXEC);
  if (clone < 0) return -errno;
  *call = "mount tmpfs";
  int err = mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555,size=4k") == 0 ? 0 : -errno;
  if (err == 0) {
    *call = "mkdir";
    err = make_folders(shown, strlen(dir));
  }
  if (err == 0) {
    *call = "move_mount";
    err = syscall(SYS_move_mount, clone, "", AT_FDCWD, shown, MOVE_FROM_FD) == 0 ? 0 : -errno;
  }
  close(clone);
  if (err == 0) {
    *call = "mount -o remount,bind,ro";
    err = mount(NULL, shown, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0 ? 0 : -errno;
  }
  if (err == 0) {
    *call = "mount -o remount,ro (the tmpfs)";
    err = mount(NULL, dir, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0 ? 0 : -errno;
  }
  return err;
}

/* Whether `path` lies beneath the folder `dir`. */
static int is_beneath(const char *path, const char *dir) {
  size_t length = strlen(dir);
  return strncmp(path, dir, length) == 0 && path[length] == '/';
}

/* The folder of `shown` beneath `dir` (a -s path), or NULL. */
static const char *shown_beneath(const struct task_mounts *plan, const char *dir) {
  for (int i = 0; i < plan->shown.count; i++)
    if (is_beneath(plan->shown.paths[i], dir)) return plan->shown.paths[i];
  return NULL;
}

/* Whether `path` lies beneath a -r folder shown only in part (a -s folder beneath it). */
static int beneath_partly_shown(const struct task_mounts *plan, const char *path) {
  for (int i = 0; i < plan->read_only.count; i++) {
    const char *dir = plan->read_only.paths[i];
    if (shown_beneath(plan, dir) != NULL && is_beneath(path, dir)) return 1;
  }
  return 0;
}

/* Each of `list` guarded by `guard`; one beneath a folder shown only in part is out of sight
 * already, and skipped where it is not there. */
static int guard_each(const struct task_mounts *plan, const struct path_list *list, int (*guard)(const char *, const char **), const char **call, const char **object) {
  for (int i = 0; i < list->count; i++) {
    *object = list->paths[i];
    int err = guard(list->paths[i], call);
    if (err < 0 && !(err == -ENOENT && beneath_partly_shown(plan, list->paths[i]))) return err;
  }
  return 0;
}

/* Each -r folder read-only; one with a -s folder beneath it shown only in that. */
static int guard_read_only(const struct task_mounts *plan, const char **call, const char **object) {
  for (int i = 0; i < plan->read_only.count; i++) {
    const char *dir = plan->read_only.paths[i], *shown = shown_beneath(plan, dir);
    *object = dir;
    int err = shown == NULL ? bind_read_only(dir, call) : show_alone(dir, shown, call);
    if (err < 0) return err;
  }
  return 0;
}

int set_up_task_mounts(const struct task_mounts *plan, int *proc_refused, const char **call, const char **object) {
  *object = "/";
  *call = "mount --make-rslave";
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) return -errno;
  *call = "read /proc/self/mountinfo";
  int count = read_mounts();
  if (count < 0) return count;
  int err = mount_own_proc(count, proc_refused, call, object);
  if (err == 0) err = guard_cgroups(count, call, object);
  for (size_t i = 0; err == 0 && i < sizeof READ_ONLY_PROC / sizeof *READ_ONLY_PROC; i++) {
    *object = READ_ONLY_PROC[i];
    err = bind_read_only(READ_ONLY_PROC[i], call);
    if (err == -ENOENT) err = 0; /* not in this kernel */
  }
  if (err == 0) err = guard_read_only(plan, call, object);
  if (err == 0) err = guard_each(plan, &plan->hidden_files, cover_file, call, object);
  if (err == 0) err = guard_each(plan, &plan->hidden_dirs, cover_dir, call, object);
  return err;
}
