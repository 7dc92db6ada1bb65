/* A task leader's mount namespace (sandbox.h): everything read-only but its write directories, no
 * device node usable but a few (sandbox-kernel.c), and a devpts instance of its own. Landlock
 * confines which files a task may change, not their metadata: a read-only mount refuses chmod,
 * chown, utimes, xattrs and inode flags too (EROFS). The new mount API does it in a few calls
 * (Linux 5.12, below Landlock's 5.13): each write directory's subtree and each device the task may
 * open is cloned as it is (a read-only mount inside it stays read-only), the whole tree is made
 * read-only and nodev recursively, and the clones are mounted back over their paths. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sandbox-parts.h"
#include "sys.h"

/* openat2's and fsconfig's flags, spelled here: glibc has them only from 2.36. */
#define RESOLVE_NO_MAGIC_LINKS 0x02
#define RESOLVE_NO_SYM_LINKS 0x04
#define FSCONFIG_STRING 1 /* FSCONFIG_SET_STRING */
#define FSCONFIG_CREATE 6 /* FSCONFIG_CMD_CREATE */

struct mount_attributes {
  uint64_t set, clear, propagation, userns_fd;
};
struct open_request {
  uint64_t flags, mode, resolve;
};

/* A devpts instance's options: anyone may open its ptmx; its terminals are their opener's. */
#define DEVPTS_OPTIONS "newinstance,ptmxmode=0666,mode=0620"

int set_mount_attributes(int dfd, const char *path, unsigned int flags, uint64_t set) {
  struct mount_attributes attributes = {.set = set};
  return syscall(SYS_mount_setattr, dfd, path, flags, &attributes, sizeof attributes) == 0 ? 0 : -errno;
}

/* An O_PATH fd of directory `path`, opened without following a symlink in any of its components:
 * a directory swapped for a symlink since the daemon resolved it is refused (ELOOP). */
static int open_directory_exactly(const char *path) {
  struct open_request request = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYM_LINKS | RESOLVE_NO_MAGIC_LINKS};
  int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &request, sizeof request);
  return fd < 0 ? -errno : fd;
}

int open_write_dirs(const char *const *dirs, int count, int *dir_fds, const char **call, const char **object) {
  *call = "openat2 RESOLVE_NO_SYMLINKS";
  for (int i = 0; i < count; i++) {
    *object = dirs[i];
    if ((dir_fds[i] = open_directory_exactly(dirs[i])) < 0) {
      int err = dir_fds[i];
      while (i-- > 0) close(dir_fds[i]);
      return err;
    }
  }
  return 0;
}

/* Opens each write directory and clones its subtree (detached, flags as they are). */
static int clone_write_dirs(const char *const *dirs, int count, int *dir_fds, int *clones, const char **call, const char **object) {
  for (int i = 0; i < count; i++) {
    *object = dirs[i];
    *call = "openat2 RESOLVE_NO_SYMLINKS";
    if ((dir_fds[i] = open_directory_exactly(dirs[i])) < 0) return dir_fds[i];
    *call = "open_tree OPEN_TREE_CLONE|AT_RECURSIVE";
    clones[i] = (int)syscall(SYS_open_tree, dir_fds[i], "", TREE_CLONE | TREE_RECURSIVE | AT_EMPTY_PATH | O_CLOEXEC);
    if (clones[i] < 0) return -errno;
  }
  return 0;
}

/* Mounts each clone back over its directory, without devices or set-id programs. */
static int mount_write_dirs(const char *const *dirs, int count, const int *dir_fds, const int *clones, const char **call, const char **object) {
  for (int i = 0; i < count; i++) {
    *object = dirs[i];
    *call = "mount_setattr MOUNT_ATTR_NOSUID|MOUNT_ATTR_NODEV";
    int err = set_mount_attributes(clones[i], "", AT_EMPTY_PATH | TREE_RECURSIVE, ATTR_NOSUID | ATTR_NODEV);
    if (err < 0) return err;
    *call = "move_mount";
    if (syscall(SYS_move_mount, clones[i], "", dir_fds[i], "", MOVE_FROM_FD | MOVE_TO_FD) != 0) return -errno;
  }
  return 0;
}

/* Makes every mount nodev, and with `read_only` read-only too, but the write directories (with
 * `read_only`), which keep the flags they had. */
static int restrict_mounts(const char *const *dirs, int count, int read_only, int *dir_fds, const char **call, const char **object) {
  int clones[count > 0 ? count : 1];
  for (int i = 0; i < count; i++) dir_fds[i] = clones[i] = -1;
  int err = read_only ? clone_write_dirs(dirs, count, dir_fds, clones, call, object) : 0;
  if (err == 0) {
    *object = "/";
    *call = read_only ? "mount_setattr MOUNT_ATTR_RDONLY|MOUNT_ATTR_NODEV|AT_RECURSIVE" : "mount_setattr MOUNT_ATTR_NODEV|AT_RECURSIVE";
    err = set_mount_attributes(AT_FDCWD, "/", TREE_RECURSIVE, ATTR_NODEV | (read_only ? ATTR_RDONLY : 0));
  }
  if (err == 0 && read_only) err = mount_write_dirs(dirs, count, dir_fds, clones, call, object);
  for (int i = 0; i < count; i++) {
    if (clones[i] >= 0) close(clones[i]);
    if (err < 0 && dir_fds[i] >= 0) close(dir_fds[i]);
  }
  return err;
}

/* Attaches the terminal's devpts instance at /dev/pts, or a new one. */
static int mount_own_devpts(int devpts_fd, const char **call, const char **object) {
  *object = "/dev/pts";
  if (devpts_fd >= 0) {
    *call = "move_mount (the terminal's devpts)";
    return syscall(SYS_move_mount, devpts_fd, "", AT_FDCWD, "/dev/pts", MOVE_FROM_FD) == 0 ? 0 : -errno;
  }
  *call = "mount devpts";
  return mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, DEVPTS_OPTIONS) == 0 ? 0 : -errno;
}

/* The working directory and a /dev/null on fds 0-2 were opened before the mounts changed: each is
 * opened again, so that the task's cwd is its write directory's bound mount where it is one, and
 * its /dev/null the read-only one (through the fd of the daemon's, fchmod would change it). */
static int reopen_after_mounts(const char **call, const char **object) {
  char cwd[PATH_MAX];
  *object = "the working directory";
  *call = "getcwd";
  if (getcwd(cwd, sizeof cwd) == NULL) return -errno;
  *call = "chdir";
  if (chdir(cwd) != 0) return -errno;
  *object = "/dev/null";
  for (int fd = 0; fd <= 2; fd++) {
    struct stat status;
    if (fstat(fd, &status) != 0 || !S_ISCHR(status.st_mode) || status.st_rdev != makedev(1, 3)) continue;
    *call = "open";
    int fresh = open("/dev/null", (fcntl(fd, F_GETFL) & O_ACCMODE) | O_CLOEXEC);
    if (fresh < 0) return -errno;
    *call = "dup2";
    int err = dup2(fresh, fd) < 0 ? -errno : 0;
    close(fresh);
    if (err < 0) return err;
  }
  return 0;
}

int confine_mounts(const char *const *dirs, int count, int read_only, int devpts_fd, int *dir_fds, const char **call,
                   const char **object) {
  *object = "";
  /* An IPC namespace too: SysV shared memory, queues and semaphores of its own, gone with it, so a
   * sandboxed task neither reads the host's nor leaves any behind. */
  *call = "unshare CLONE_NEWNS|CLONE_NEWIPC";
  if (unshare(CLONE_NEWNS | CLONE_NEWIPC) != 0) return -errno;
  *object = "/";
  *call = "mount --make-rprivate";
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) return -errno;
  int devices[TASK_DEVICE_COUNT];
  int err = clone_devices(devices, call, object);
  if (err == 0) err = restrict_mounts(dirs, count, read_only, dir_fds, call, object);
  if (err == 0) err = protect_kernel_mounts(call, object);
  if (err == 0) err = mount_devices(devices, call, object);
  for (int i = 0; i < TASK_DEVICE_COUNT; i++)
    if (devices[i] >= 0) close(devices[i]);
  if (err == 0) err = mount_own_devpts(devpts_fd, call, object);
  if (err == 0) err = mount_own_ptmx_and_shm(call, object);
  if (err == 0) err = reopen_after_mounts(call, object);
  return err;
}

int open_detached_terminal(int cols, int rows, int *mount_fd, int *master_fd, int *number, const char **call) {
  *call = "fsopen devpts";
  int context = (int)syscall(SYS_fsopen, "devpts", 1 /* FSOPEN_CLOEXEC */);
  if (context < 0) return -errno;
  int err = 0;
  *call = "fsconfig ptmxmode=0666,mode=0620";
  if (syscall(SYS_fsconfig, context, FSCONFIG_STRING, "ptmxmode", "0666", 0) != 0 ||
      syscall(SYS_fsconfig, context, FSCONFIG_STRING, "mode", "0620", 0) != 0)
    err = -errno;
  if (err == 0) *call = "fsconfig FSCONFIG_CMD_CREATE";
  if (err == 0 && syscall(SYS_fsconfig, context, FSCONFIG_CREATE, NULL, NULL, 0) != 0) err = -errno;
  if (err == 0) *call = "fsmount";
  *mount_fd = err == 0 ? (int)syscall(SYS_fsmount, context, 1 /* FSMOUNT_CLOEXEC */, ATTR_NOSUID | ATTR_NOEXEC) : -1;
  if (err == 0 && *mount_fd < 0) err = -errno;
  close(context);
  if (err < 0) return err;
  *call = "open ptmx";
  *master_fd = openat(*mount_fd, "ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (*master_fd < 0) err = -errno;
  int unlocked = 0;
  struct winsize size = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
  if (err == 0) *call = "ioctl TIOCSPTLCK";
  if (err == 0 && ioctl(*master_fd, TIOCSPTLCK, &unlocked) != 0) err = -errno;
  if (err == 0) *call = "ioctl TIOCGPTN";
  if (err == 0 && ioctl(*master_fd, TIOCGPTN, number) != 0) err = -errno;
  if (err == 0) *call = "ioctl TIOCSWINSZ";
  if (err == 0 && ioctl(*master_fd, TIOCSWINSZ, &size) != 0) err = -errno;
  if (err < 0) {
    if (*master_fd >= 0) close(*master_fd);
    close(*mount_fd);
  }
  return err;
}
