/* A task leader's sandbox, set up in the leader between its fork and its exec: writes confined to
 * some directories by Landlock, and a network namespace of its own with only loopback up. Both are
 * inherited by everything the leader starts, setsid'd and double-forked descendants included. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* Every right that changes the file system, as ABI 1 has them; REFER (ABI 2) and TRUNCATE (ABI 3)
 * are added where the kernel knows them. Reading and executing are left alone. */
#define WRITE_RIGHTS_ABI1                                                                                                        \
  (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | \
   LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |      \
   LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM)

/* Devices a shell writes to whatever the sandbox: its own terminal is already open as its stdio. */
static const char *const WRITABLE_DEVICES[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"};

int landlock_abi(void) {
  long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? -errno : (int)abi;
}

/* Allows `rights` beneath `path` in `ruleset`: 0, or -errno with `*call` set. */
static int allow_beneath(int ruleset, const char *path, unsigned long long rights, const char **call) {
  struct landlock_path_beneath_attr rule = {.allowed_access = rights};
  *call = "open O_PATH";
  rule.parent_fd = open(path, O_PATH | O_CLOEXEC);
  if (rule.parent_fd < 0) return -errno;
  *call = "landlock_add_rule";
  int err = syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) == 0 ? 0 : -errno;
  close(rule.parent_fd);
  return err;
}

int confine_writes(const char *const *dirs, int count, const char **call, const char **object) {
  int abi = landlock_abi();
  *object = "";
  *call = "landlock_create_ruleset (Landlock is not enabled in this kernel)";
  if (abi < 1) return abi < 0 ? abi : -EOPNOTSUPP;
  unsigned long long handled = WRITE_RIGHTS_ABI1 | (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0) | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0);
  unsigned long long device_rights = LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0);
  struct landlock_ruleset_attr attr = {.handled_access_fs = handled};
  *call = "landlock_create_ruleset";
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0) return -errno;
  int err = 0;
  for (int i = 0; err == 0 && i < count; i++) {
    *object = dirs[i];
    err = allow_beneath(ruleset, dirs[i], handled, call);
  }
  for (size_t i = 0; err == 0 && i < sizeof WRITABLE_DEVICES / sizeof *WRITABLE_DEVICES; i++) {
    *object = WRITABLE_DEVICES[i];
    err = allow_beneath(ruleset, WRITABLE_DEVICES[i], device_rights, call);
    if (err == -ENOENT) err = 0; /* a device this host lacks */
  }
  *object = "";
  if (err == 0) {
    *call = "prctl PR_SET_NO_NEW_PRIVS";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) err = -errno;
  }
  if (err == 0) {
    *call = "landlock_restrict_self";
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) err = -errno;
  }
  close(ruleset);
  return err;
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
  /* Without CAP_SYS_ADMIN past its exec, a root task cannot setns back into the host's network
   * (through /proc/1/ns/net, the tasks' init, say) nor unshare or mount its way out. */
  if (err == 0) *call = "prctl PR_CAPBSET_DROP CAP_SYS_ADMIN";
  if (err == 0 && prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0) err = -errno;
  return err;
}
