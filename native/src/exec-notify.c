/* The command policy's seccomp filter and the reading of an exec (exec-notify.h). */
#define _GNU_SOURCE
#include "exec-notify.h"
#include "exec-resolve.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* execve and execveat in each architecture a process here can call them in: the native one (and
 * x32's numbers under it), and the 32-bit compat one. */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define NATIVE_EXECVE 59
#define NATIVE_EXECVEAT 322
#define X32_BIT 0x40000000
#define X32_EXECVE (X32_BIT + 520)
#define X32_EXECVEAT (X32_BIT + 545)
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_EXECVE 11
#define COMPAT_EXECVEAT 358
#define NATIVE_MOUNT 165
#define X32_MOUNT (X32_BIT + 165)
#define COMPAT_MOUNT 21
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define NATIVE_EXECVE 221
#define NATIVE_EXECVEAT 281
#define X32_BIT 0
#define X32_EXECVE NATIVE_EXECVE
#define X32_EXECVEAT NATIVE_EXECVEAT
#define COMPAT_ARCH AUDIT_ARCH_ARM
#define COMPAT_EXECVE 11
#define COMPAT_EXECVEAT 387
#define NATIVE_MOUNT 40
#define X32_MOUNT NATIVE_MOUNT
#define COMPAT_MOUNT 21
#endif
/* fsopen has one number in every architecture (x32's with its bit). */
#define FSOPEN 430
#define X32_FSOPEN (X32_BIT + FSOPEN)

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

int install_exec_filter(const char **call) {
#ifdef NATIVE_ARCH
  /* Jumps count the instructions skipped: the targets are the indexes in the comments. Execs,
   * mounts and fsopen go to the listener (mounts for their type: exec_policy_serve). */
  struct sock_filter filter[] = {
      /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 10),
      /* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      /* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_EXECVE, 15, 0),
      /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_EXECVEAT, 14, 0),
      /* 5 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_EXECVE, 13, 0),
      /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_EXECVEAT, 12, 0),
      /* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_MOUNT, 11, 0),
      /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_MOUNT, 10, 0),
      /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FSOPEN, 9, 0),
      /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, X32_FSOPEN, 8, 0),
      /* 11 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 12 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, 0, 5),
      /* 13 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      /* 14 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_EXECVE, 4, 0),
      /* 15 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_EXECVEAT, 3, 0),
      /* 16 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_MOUNT, 2, 0),
      /* 17 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FSOPEN, 1, 0),
      /* 18 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 19 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
  };
  struct sock_fprog program = {.len = sizeof filter / sizeof *filter, .filter = filter};
  *call = "seccomp SECCOMP_SET_MODE_FILTER SECCOMP_FILTER_FLAG_NEW_LISTENER";
  long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
  /* Without CAP_SYS_ADMIN the kernel takes a filter only under no_new_privs. */
  if (fd < 0 && errno == EACCES) {
    *call = "prctl PR_SET_NO_NEW_PRIVS (for the command policy's seccomp filter)";
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -errno;
    *call = "seccomp SECCOMP_SET_MODE_FILTER SECCOMP_FILTER_FLAG_NEW_LISTENER";
    fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
  }
  return fd < 0 ? -errno : (int)fd;
#else
  *call = "seccomp (no command policy filter is written for this architecture: x86-64 and arm64 have one)";
  return -ENOSYS;
#endif
}

int exec_notify_alloc(struct seccomp_notif **request, struct seccomp_notif_resp **response) {
  struct seccomp_notif_sizes sizes;
  if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) return -errno;
  /* The kernel may know a larger structure than these headers: take the larger of the two. */
  *request = calloc(1, sizes.seccomp_notif > sizeof **request ? sizes.seccomp_notif : sizeof **request);
  *response = calloc(1, sizes.seccomp_notif_resp > sizeof **response ? sizes.seccomp_notif_resp : sizeof **response);
  return *request != NULL && *response != NULL ? 0 : -ENOMEM;
}

int receive_exec(int listener, struct seccomp_notif *request) {
  memset(request, 0, sizeof *request);
  return ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, request) == 0 ? 0 : -errno;
}

int answer_exec(int listener, struct seccomp_notif_resp *response, uint64_t id, int err) {
  memset(response, 0, sizeof *response);
  response->id = id;
  response->error = -err;
  response->flags = err == 0 ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
  return ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response) == 0 ? 0 : -errno;
}

int exec_waits(int listener, uint64_t id) { return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0; }

/* Reads a NUL-terminated string at `address` of `pid` into `out` (at most `size` - 1 bytes, page
 * by page: a read that crosses into an unmapped page fails as a whole). Returns its length, or
 * -errno; `*cut` is set when it was longer. */
static long read_string(pid_t pid, uint64_t address, char *out, size_t size, int *cut) {
  size_t used = 0, page = (size_t)sysconf(_SC_PAGESIZE);
  while (used < size - 1) {
    size_t chunk = page - (size_t)((address + used) % page);
    if (chunk > size - 1 - used) chunk = size - 1 - used;
    struct iovec local = {.iov_base = out + used, .iov_len = chunk};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)(address + used), .iov_len = chunk};
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (got <= 0) return got < 0 ? -errno : -EFAULT;
    char *end = memchr(out + used, '\0', (size_t)got);
    if (end != NULL) return end - out;
    used += (size_t)got;
  }
  out[used] = '\0';
  *cut = 1;
  return (long)used;
}

/* Reads argv's pointers at `address` (each `width` bytes) and up to `limit` of its words. */
static int read_words(pid_t pid, uint64_t address, int width, int limit, struct exec_read *exec) {
  exec->call.argc = 0;
  exec->more_words = 0;
  if (address == 0) return 0; /* Linux takes a NULL argv as an empty one */
  unsigned char pointers[EXEC_MAX_WORDS * 8 + 8];
  int wanted = limit + 1; /* one more, to know whether argv goes on */
  struct iovec local = {.iov_base = pointers, .iov_len = (size_t)wanted * (size_t)width};
  struct iovec remote = {.iov_base = (void *)(uintptr_t)address, .iov_len = local.iov_len};
  ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
  if (got < width) return got < 0 ? -errno : -EFAULT;
  for (int i = 0; i < wanted && (i + 1) * width <= got; i++) {
    uint64_t word = 0;
    if (width == 8) memcpy(&word, pointers + i * 8, 8);
    else {
      uint32_t narrow;
      memcpy(&narrow, pointers + i * 4, 4);
      word = narrow;
    }
    if (word == 0) return 0;
    if (i == limit) {
      exec->cut = exec->more_words = 1;
      return 0;
    }
    long length = read_string(pid, word, exec->words[i], EXEC_MAX_WORD_BYTES, &exec->cut);
    if (length < 0) return (int)length;
    exec->argv[i] = exec->words[i];
    exec->call.argc = i + 1;
  }
  return 0;
}

/* The target of a /proc link of `pid` (its cwd, an fd), or -errno. */
static int read_proc_link(pid_t pid, const char *link, char *out, size_t size) {
  char name[64];
  snprintf(name, sizeof name, "/proc/%d/%s", (int)pid, link);
  ssize_t length = readlink(name, out, size - 1);
  if (length < 0) return -errno;
  if ((size_t)length == size - 1) return -ENAMETOOLONG;
  out[length] = '\0';
  return 0;
}

/* Makes exec->path absolute: as given, or under the exec's directory fd or the process's cwd. */
static int resolve_path(pid_t pid, int at_dirfd, int empty_path, struct exec_read *exec) {
  if (exec->path[0] == '/') return 0;
  char base[PATH_MAX];
  char link[32];
  if (at_dirfd != AT_FDCWD) snprintf(link, sizeof link, "fd/%d", at_dirfd);
  int err = read_proc_link(pid, at_dirfd == AT_FDCWD ? "cwd" : link, base, sizeof base);
  if (err < 0) return err;
  if (empty_path && exec->path[0] == '\0') return snprintf(exec->path, sizeof exec->path, "%s", base) < (int)sizeof exec->path ? 0 : -ENAMETOOLONG;
  char joined[sizeof exec->path];
  int length = snprintf(joined, sizeof joined, "%s/%s", strcmp(base, "/") == 0 ? "" : base, exec->path);
  if (length >= (int)sizeof joined) return -ENAMETOOLONG;
  memcpy(exec->path, joined, (size_t)length + 1);
  return 0;
}

int task_absolute_path(pid_t pid, const char *name, char *out, size_t size) {
  if (name[0] == '/') return snprintf(out, size, "%s", name) < (int)size ? 0 : -ENAMETOOLONG;
  char base[PATH_MAX];
  int err = read_proc_link(pid, "cwd", base, sizeof base);
  if (err < 0) return err;
  return snprintf(out, size, "%s/%s", strcmp(base, "/") == 0 ? "" : base, name) < (int)size ? 0 : -ENAMETOOLONG;
}

/* The name the kernel gives the file of an exec (bprm->filename in fs/exec.c). */
static void name_as_kernel(int dirfd, int empty_path, struct exec_read *exec) {
  if (dirfd == AT_FDCWD || exec->path[0] == '/') snprintf(exec->named, sizeof exec->named, "%s", exec->path);
  else if (empty_path && exec->path[0] == '\0') snprintf(exec->named, sizeof exec->named, "/dev/fd/%d", dirfd);
  else snprintf(exec->named, sizeof exec->named, "/dev/fd/%d/%s", dirfd, exec->path);
}

static int argv_width(const struct seccomp_data *data) { return data->arch == NATIVE_ARCH && ((unsigned)data->nr & X32_BIT) == 0 ? 8 : 4; }

static int is_execveat(const struct seccomp_data *data) {
  return data->nr == NATIVE_EXECVEAT || data->nr == X32_EXECVEAT || (data->arch == COMPAT_ARCH && data->nr == COMPAT_EXECVEAT);
}

int read_exec_words(const struct seccomp_notif *request, int words, struct exec_read *exec) {
  if (words > EXEC_MAX_WORDS) words = EXEC_MAX_WORDS;
  const struct seccomp_data *data = &request->data;
  return read_words((pid_t)request->pid, data->args[is_execveat(data) ? 2 : 1], argv_width(data), words, exec);
}

int read_exec(const struct seccomp_notif *request, int words, struct exec_read *exec) {
  const struct seccomp_data *data = &request->data;
  int at = is_execveat(data);
  pid_t pid = (pid_t)request->pid;
  exec->cut = 0;
  if (exec->fd >= 0) close(exec->fd);
  exec->fd = -1;
  int path_cut = 0;
  long length = read_string(pid, data->args[at ? 1 : 0], exec->path, sizeof exec->path, &path_cut);
  if (length < 0) return (int)length;
  if (path_cut) return -ENAMETOOLONG;
  int dirfd = at ? (int)data->args[0] : AT_FDCWD;
  int empty_path = at && (data->args[4] & AT_EMPTY_PATH) != 0;
  name_as_kernel(dirfd, empty_path, exec);
  int fd = resolve_as_task(pid, dirfd, empty_path, exec->path, exec->real, sizeof exec->real);
  exec->fd = fd < 0 ? -1 : fd;
  exec->call.real = fd >= 0 ? exec->real : NULL;
  exec->missing = fd == -ENOENT || fd == -ENOTDIR;
  int err = resolve_path(pid, dirfd, empty_path, exec);
  if (err < 0 || (err = read_exec_words(request, words, exec)) < 0) return err;
  exec->call.path = exec->path;
  exec->call.argv = exec->argv;
  exec->call.identity = NULL;
  return 0;
}

int is_mount_call(const struct seccomp_notif *request) {
  const struct seccomp_data *data = &request->data;
  if (data->arch == COMPAT_ARCH) return data->nr == COMPAT_MOUNT || data->nr == FSOPEN;
  return data->nr == NATIVE_MOUNT || data->nr == X32_MOUNT || data->nr == FSOPEN || data->nr == X32_FSOPEN;
}

int makes_filesystem(const struct seccomp_notif *request) {
  const struct seccomp_data *data = &request->data;
  if (data->nr == FSOPEN || data->nr == X32_FSOPEN) return 1;
  const uint64_t changes = MS_REMOUNT | MS_BIND | MS_MOVE | MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE;
  return (data->args[3] & changes) == 0;
}
