/* A task leader's writes confined by Landlock, its Landlock domain, and its network namespace
 * (sandbox.h). All are inherited by everything the leader starts, setsid'd and double-forked
 * descendants included. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox-parts.h"

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/* Every right that changes the file system, as ABI 1 has them; REFER (ABI 2), TRUNCATE (ABI 3) and
 * IOCTL_DEV (ABI 5: ioctl on a device opened from now on) are added where the kernel knows them.
 * Reading and executing are left alone. */
#define WRITE_RIGHTS_ABI1                                                                                                        \
  (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | \
   LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |      \
   LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)
/* Never granted: a device node made, linked or renamed into a write directory. */
#define DEVICE_NODE_RIGHTS (LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK)

int landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : (int)abi;
}

/* Allows `rights` beneath the directory or file open at `fd` in `ruleset`: 0, or -errno with `*call` set. */
static int allow_beneath(int ruleset, int fd, unsigned long long rights, const char **call) {
  struct landlock_path_beneath_attr rule = {.allowed_access = rights, .parent_fd = fd};
  *call = "landlock_add_rule";
  return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0 ? 0 : -errno;
}

/* Allows `rights` beneath `path` where this host has it. */
static int allow_path(int ruleset, const char *path, unsigned long long rights, const char **call, const char **object) {
  *object = path;
  *call = "open O_PATH";
  int fd = open(path, O_PATH | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT ? 0 : -errno;
  int err = allow_beneath(ruleset, fd, rights, call);
  close(fd);
  return err;
}

/* Allows `rights` on each DEVICE_WRITABLE device (TASK_DEVICES): a shell writes to and sets modes
 * of these whatever the sandbox; its own terminal is already open as its stdio, and /dev/pts is
 * its own devpts instance (confine_mounts). */
static int allow_devices(int ruleset, unsigned long long rights, const char **call, const char **object) {
  int err = 0;
  for (int i = 0; err == 0 && i < TASK_DEVICE_COUNT; i++)
    if (TASK_DEVICES[i].use & DEVICE_WRITABLE) err = allow_path(ruleset, TASK_DEVICES[i].path, rights, call, object);
  return err;
}

/* The ruleset's attributes as ABI 6 has them: `scoped` is past what older headers (and kernels)
 * know, so it is spelled here; an older kernel takes the larger struct while `scoped` is 0. */
struct ruleset_attributes {
  unsigned long long handled_access_fs, handled_access_net, scoped;
};
#define SCOPE_ABSTRACT_UNIX_SOCKET 1ULL /* LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET */
#define SCOPE_SIGNAL 2ULL               /* LANDLOCK_SCOPE_SIGNAL */

/* A ruleset handling `handled` of the file system, and (ABI 6) scoping signals and abstract unix
 * sockets to the task's own domain: -errno, or its fd. */
static int create_ruleset(int abi, unsigned long long handled, const char **call) {
  struct ruleset_attributes attr = {.handled_access_fs = handled,
                                    .scoped = abi >= 6 ? SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL : 0};
  *call = "landlock_create_ruleset";
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  return ruleset < 0 ? -errno : ruleset;
}

/* Enforces `ruleset` on the calling process and all it starts from now on, and closes it. */
static int restrict_self(int ruleset, const char **call, const char **object) {
  *object = "";
  *call = "landlock_restrict_self";
  int err = syscall(SYS_landlock_restrict_self, ruleset, 0) == 0 ? 0 : -errno;
  close(ruleset);
  return err;
}

int confine_writes(const int *dir_fds, const char *const *dirs, int count, const char **call, const char **object) {
  int abi = landlock_abi();
  *object = "";
  *call = "landlock_create_ruleset (Landlock is not enabled in this kernel)";
  if (abi < 1) return abi < 0 ? abi : -EOPNOTSUPP;
  unsigned long long handled = WRITE_RIGHTS_ABI1 | (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0) |
                               (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0) | (abi >= 5 ? LANDLOCK_ACCESS_FS_IOCTL_DEV : 0);
  unsigned long long device_rights = handled & (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV);
  int ruleset = create_ruleset(abi, handled, call);
  if (ruleset < 0) return ruleset;
  int err = 0;
  for (int i = 0; err == 0 && i < count; i++) {
    *object = dirs[i];
    err = allow_beneath(ruleset, dir_fds[i], handled & ~DEVICE_NODE_RIGHTS, call);
  }
  if (err == 0) err = allow_devices(ruleset, device_rights, call, object);
  /* The task's own tmpfs (confine_mounts), for POSIX shared memory and semaphores. */
  if (err == 0) err = allow_path(ruleset, "/dev/shm", handled & ~DEVICE_NODE_RIGHTS, call, object);
  if (err < 0) {
    close(ruleset);
    return err;
  }
  return restrict_self(ruleset, call, object);
}

int enter_own_domain(const char **call, const char **object) {
  int abi = landlock_abi();
  *object = "";
  if (abi < 1) return 0;
  /* Before ABI 6 a ruleset must handle some access: making a block device, which no task may do
   * anyway (the kernel asks for CAP_MKNOD in the host's user namespace), and no rule allows. */
  int ruleset = create_ruleset(abi, abi >= 6 ? 0 : LANDLOCK_ACCESS_FS_MAKE_BLOCK, call);
  if (ruleset < 0) return ruleset;
  return restrict_self(ruleset, call, object);
}

int isolate_network(const char **call) {
  *call = "unshare CLONE_NEWNET";
  if (unshare(CLONE_NEWNET) != 0) return -errno;
  *call = "socket AF_INET (to bring lo up)";
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  struct ifreq request;
  memset(&request, 0, sizeof request);
  strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  *call = "ioctl SIOCGIFFLAGS lo";
  int err = ioctl(fd, SIOCGIFFLAGS, &request) == 0 ? 0 : -errno;
  request.ifr_flags |= IFF_UP;
  if (err == 0) *call = "ioctl SIOCSIFFLAGS lo up";
  if (err == 0 && ioctl(fd, SIOCSIFFLAGS, &request) != 0) err = -errno;
  close(fd);
  return err;
}
