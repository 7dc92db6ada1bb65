/* What the sandbox's files share (sandbox.h is what they offer the shim): the devices every
 * sandboxed task may open, and the steps of its mount namespace that sandbox-mounts.c takes from
 * sandbox-kernel.c. */
#ifndef HIVE_SANDBOX_PARTS_H
#define HIVE_SANDBOX_PARTS_H

#include <stdint.h>

#include "sys.h" /* the new mount API's flags */

/* A device a sandboxed task may open: DEVICE_BOUND ones are bound from the host's /dev into its
 * mount namespace (every other device node there is nodev); DEVICE_WRITABLE ones Landlock lets it
 * write when its writes are confined. */
#define DEVICE_BOUND 1
#define DEVICE_WRITABLE 2
struct task_device {
  const char *path;
  int use;
};
extern const struct task_device TASK_DEVICES[];
extern const int TASK_DEVICE_COUNT;

/* mount_setattr(2) setting `set` on the mount at `dfd`/`path`: 0 or -errno. */
int set_mount_attributes(int dfd, const char *path, unsigned int flags, uint64_t set);

/* Clones each DEVICE_BOUND device's mount (detached, flags as they are) into `clones` (-1: this
 * host lacks it), before the tree around them is made nodev. */
int clone_devices(int *clones, const char **call, const char **object);

/* Mounts each clone back over its device, read-only (no chmod of the host's /dev/null) and nosuid. */
int mount_devices(const int *clones, const char **call, const char **object);

/* Makes every kernel interface mount (kernel_mount_of's) read-only, nosuid and nodev, with all
 * mounted beneath it. */
int protect_kernel_mounts(const char **call, const char **object);

/* Binds the task's own devpts ptmx over /dev/ptmx (the host's is nodev now), and mounts a tmpfs of
 * its own at /dev/shm: both after its devpts is at /dev/pts. */
int mount_own_ptmx_and_shm(const char **call, const char **object);

#endif
