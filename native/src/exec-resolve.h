/* The file an exec names, found as the process that makes it sees it: its root, its cwd, its fds.
 * The shim resolving the path itself would read "the caller" (/proc/self, /proc/thread-self, and
 * /dev/fd and /dev/stdin through them) as the shim, and miss what the task opened. */
#ifndef HIVE_EXEC_RESOLVE_H
#define HIVE_EXEC_RESOLVE_H

#include <stddef.h>
#include <sys/types.h>

/* The most symlinks one resolution follows, as the kernel's (MAXSYMLINKS); past it, -ELOOP. */
#define RESOLVE_MAX_LINKS 40

/* Opens (O_PATH) the file that thread `tid` names by `path` (from its directory fd `dirfd`, or
 * AT_FDCWD; "" with `empty_path` is `dirfd` itself), and writes into `real` (`size` bytes) its
 * absolute path as the shim names it: the fd, the caller's to close, or -errno (-ENOENT,
 * -ENOTDIR: it is not there). Each symlink is read beneath the thread's root; /proc/self and
 * /proc/thread-self are the thread's own; the links of /proc/PID (fd/N, cwd, exe, root) go where
 * the kernel takes them. */
int resolve_as_task(pid_t tid, int dirfd, int empty_path, const char *path, char *real, size_t size);

#endif
