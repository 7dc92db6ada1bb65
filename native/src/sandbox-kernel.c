/* The kernel's interfaces and the devices in a sandboxed task's mount namespace (sandbox.h): every
 * mount through which a process changes the kernel rather than files (proc, sysfs, cgroupfs and
 * the like, wherever mounted, and all mounted beneath them) is read-only to it, as containers mount
 * them, and no device opens but the few a shell needs. A root task keeps CAP_DAC_OVERRIDE: without
 * this, /proc/sys/kernel/core_pattern would name a program the kernel runs as root on the host, and
 * a write to cgroup.procs would move a task out of its cgroup, and out of kill's reach. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-parts.h"
#include "sys.h"

const struct task_device TASK_DEVICES[] = {
    {"/dev/null", DEVICE_BOUND | DEVICE_WRITABLE}, {"/dev/zero", DEVICE_BOUND | DEVICE_WRITABLE},
    {"/dev/full", DEVICE_BOUND | DEVICE_WRITABLE}, {"/dev/tty", DEVICE_BOUND | DEVICE_WRITABLE},
    {"/dev/random", DEVICE_BOUND},                 {"/dev/urandom", DEVICE_BOUND},
    {"/dev/ptmx", DEVICE_WRITABLE},                {"/dev/pts", DEVICE_WRITABLE},
};
const int TASK_DEVICE_COUNT = sizeof TASK_DEVICES / sizeof *TASK_DEVICES;

/* File systems through which a process changes the kernel, its devices or other processes, not
 * files. The mount at /dev counts too, whatever its type (a tmpfs in containers). */
static const char *const KERNEL_FILE_SYSTEMS[] = {"proc",     "sysfs",      "cgroup",   "cgroup2",  "devtmpfs", "devpts",
                                                  "debugfs",  "tracefs",    "securityfs", "bpf",    "configfs", "pstore",
                                                  "efivarfs", "binfmt_misc", "fusectl", "selinuxfs", "smackfs", "nfsd",
                                                  "rpc_pipefs"};

static int is_kernel_mount(const char *point, const char *type) {
  if (strcmp(point, "/dev") == 0) return 1;
  for (size_t i = 0; i < sizeof KERNEL_FILE_SYSTEMS / sizeof *KERNEL_FILE_SYSTEMS; i++)
    if (strcmp(type, KERNEL_FILE_SYSTEMS[i]) == 0) return 1;
  return 0;
}

/* Undoes mountinfo's octal escapes (a space is \040) in place. */
static void unescape(char *text) {
  char *out = text;
  for (char *in = text; *in != '\0'; out++) {
    if (in[0] == '\\' && in[1] >= '0' && in[1] <= '3' && in[2] >= '0' && in[2] <= '7' && in[3] >= '0' && in[3] <= '7') {
      *out = (char)((in[1] - '0') * 64 + (in[2] - '0') * 8 + (in[3] - '0'));
      in += 4;
    } else {
      *out = *in++;
    }
  }
  *out = '\0';
}

typedef int (*mount_visitor)(const char *point, const char *type, void *context);

/* One line of mountinfo, "ID PARENT MAJ:MIN ROOT POINT OPTIONS [TAGS...] - TYPE SOURCE OPTIONS":
 * `visit`'s answer for a kernel mount, else 0. */
static int visit_line(char *line, mount_visitor visit, void *context) {
  char *point = NULL;
  for (int field = 0; field < 5 && line != NULL; field++) point = strsep(&line, " ");
  char *separator = line == NULL ? NULL : strstr(line, " - ");
  if (separator == NULL) return -EPROTO;
  char *type = separator + 3;
  type[strcspn(type, " ")] = '\0';
  unescape(point);
  return is_kernel_mount(point, type) ? visit(point, type, context) : 0;
}

/* Calls `visit` on each kernel interface mount of this process's mount namespace until it answers
 * other than 0, and returns that (0 once all are seen), or -errno. It reads /proc/self/mountinfo
 * line by line in a buffer on the stack: the leader shares the shim's memory until its exec, so it
 * allocates nothing. */
static int visit_kernel_mounts(mount_visitor visit, void *context) {
  int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  char buffer[3 * PATH_MAX];
  size_t used = 0;
  int result = 0;
  for (;;) {
    ssize_t got = read(fd, buffer + used, sizeof buffer - used - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got < 0) result = -errno;
      break;
    }
    used += (size_t)got;
    char *start = buffer, *end;
    while (result == 0 && (end = memchr(start, '\n', (size_t)(buffer + used - start))) != NULL) {
      *end = '\0';
      result = visit_line(start, visit, context);
      start = end + 1;
    }
    used -= (size_t)(start - buffer);
    memmove(buffer, start, used);
    if (result == 0 && used == sizeof buffer - 1) result = -ENAMETOOLONG;
    if (result != 0) break;
  }
  close(fd);
  return result;
}

/* The deepest kernel mount whose point holds a path, as kernel_mount_of asks for it. */
struct holder {
  const char *path;
  char *point, *type;
  size_t point_size, type_size, length;
};

static int note_holder(const char *point, const char *type, void *context) {
  struct holder *holder = context;
  size_t length = strlen(point);
  int holds = strcmp(point, "/") == 0 || (strncmp(holder->path, point, length) == 0 && (holder->path[length] == '/' || holder->path[length] == '\0'));
  if (holds && length >= holder->length && length < holder->point_size) {
    holder->length = length;
    snprintf(holder->point, holder->point_size, "%s", point);
    snprintf(holder->type, holder->type_size, "%s", type);
  }
  return 0;
}

int kernel_mount_of(const char *path, char *point, size_t point_size, char *type, size_t type_size) {
  struct holder holder = {.path = path, .point = point, .type = type, .point_size = point_size, .type_size = type_size};
  point[0] = type[0] = '\0';
  int err = visit_kernel_mounts(note_holder, &holder);
  return err < 0 ? err : point[0] != '\0';
}

/* The point of the mount protect_kernel_mounts could not protect, for its caller's message. */
static char unprotected_point[PATH_MAX];

static int protect_mount(const char *point, const char *type, void *context) {
  (void)type, (void)context;
  int err = set_mount_attributes(AT_FDCWD, point, AT_SYMLINK_NOFOLLOW | TREE_RECURSIVE, ATTR_RDONLY | ATTR_NOSUID | ATTR_NODEV);
  /* A mount whose point leads elsewhere now (another mount hides it) or nowhere is out of reach by
   * path, the task's too: ENOENT, or EINVAL for a point inside the mount that hides it. */
  if (err == -ENOENT || err == -EINVAL) return 0;
  if (err < 0) snprintf(unprotected_point, sizeof unprotected_point, "%s", point);
  return err;
}

int protect_kernel_mounts(const char **call, const char **object) {
  *call = "read /proc/self/mountinfo";
  *object = "";
  unprotected_point[0] = '\0';
  int err = visit_kernel_mounts(protect_mount, NULL);
  if (unprotected_point[0] != '\0') {
    *call = "mount_setattr MOUNT_ATTR_RDONLY|MOUNT_ATTR_NOSUID|MOUNT_ATTR_NODEV|AT_RECURSIVE";
    *object = unprotected_point;
  }
  return err;
}

int clone_devices(int *clones, const char **call, const char **object) {
  *call = "open_tree OPEN_TREE_CLONE";
  for (int i = 0; i < TASK_DEVICE_COUNT; i++) clones[i] = -1;
  for (int i = 0; i < TASK_DEVICE_COUNT; i++) {
    *object = TASK_DEVICES[i].path;
    if (!(TASK_DEVICES[i].use & DEVICE_BOUND)) continue;
    clones[i] = (int)syscall(SYS_open_tree, AT_FDCWD, TASK_DEVICES[i].path, TREE_CLONE | AT_SYMLINK_NOFOLLOW | O_CLOEXEC);
    if (clones[i] < 0 && errno != ENOENT) return -errno;
  }
  return 0;
}

int mount_devices(const int *clones, const char **call, const char **object) {
  for (int i = 0; i < TASK_DEVICE_COUNT; i++) {
    if (clones[i] < 0) continue;
    *object = TASK_DEVICES[i].path;
    *call = "mount_setattr MOUNT_ATTR_RDONLY|MOUNT_ATTR_NOSUID|MOUNT_ATTR_NOEXEC";
    int err = set_mount_attributes(clones[i], "", AT_EMPTY_PATH, ATTR_RDONLY | ATTR_NOSUID | ATTR_NOEXEC);
    if (err < 0) return err;
    *call = "move_mount";
    if (syscall(SYS_move_mount, clones[i], "", AT_FDCWD, TASK_DEVICES[i].path, MOVE_FROM_FD) != 0) return -errno;
  }
  return 0;
}

/* Binds the devpts instance's own ptmx over /dev/ptmx where that is a device node (in containers
 * it is a symlink to pts/ptmx, which leads there already). */
static int bind_own_ptmx(const char **call, const char **object) {
  struct stat status;
  *object = "/dev/ptmx";
  if (lstat("/dev/ptmx", &status) != 0 || !S_ISCHR(status.st_mode)) return 0;
  *call = "open_tree OPEN_TREE_CLONE /dev/pts/ptmx";
  int clone = (int)syscall(SYS_open_tree, AT_FDCWD, "/dev/pts/ptmx", TREE_CLONE | AT_SYMLINK_NOFOLLOW | O_CLOEXEC);
  if (clone < 0) return -errno;
  *call = "move_mount";
  int err = syscall(SYS_move_mount, clone, "", AT_FDCWD, "/dev/ptmx", MOVE_FROM_FD) == 0 ? 0 : -errno;
  close(clone);
  return err;
}

int mount_own_ptmx_and_shm(const char **call, const char **object) {
  int err = bind_own_ptmx(call, object);
  struct stat status;
  *object = "/dev/shm";
  if (err < 0 || lstat("/dev/shm", &status) != 0 || !S_ISDIR(status.st_mode)) return err;
  *call = "mount tmpfs";
  return mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") == 0 ? 0 : -errno;
}
