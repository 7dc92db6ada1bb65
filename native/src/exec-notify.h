/* The kernel's side of the command policy: a seccomp filter that hands every execve and execveat
 * (and mount and fsopen) of the calling process and all it starts to a listener
 * (SECCOMP_RET_USER_NOTIF), and the reading of one such exec's program and arguments (a mount's
 * file system type) from the caller's memory. seccomp_unotify(2) warns that
 * the memory read can change between the check and the exec: a guard rail, not a boundary. */
#ifndef HIVE_EXEC_NOTIFY_H
#define HIVE_EXEC_NOTIFY_H

#include <linux/seccomp.h>
#include <stdint.h>
#include <sys/types.h>

#include "exec-rules.h"

/* The most words of argv read from an exec (for its rule and the report). */
#define EXEC_MAX_WORDS 64
/* The most bytes of one word read; a longer one is cut (and the exec reported as cut). */
#define EXEC_MAX_WORD_BYTES 1024

/* An exec read from the process that makes it: `call` points into this structure. */
struct exec_read {
  struct exec_call call;
  char path[4096];
  char real[4096];
  /* The name a #! script's interpreter is given for the file: the path as the exec gave it, or
   * /dev/fd/N[/PATH] for an execveat from a directory fd (as the kernel names it). */
  char named[4096 + 32];
  /* The file (O_PATH), or -1 where it could not be resolved; closed by the next read. */
  int fd;
  char *argv[EXEC_MAX_WORDS];
  char words[EXEC_MAX_WORDS][EXEC_MAX_WORD_BYTES];
  /* argv had more words than were read, or a word was cut. */
  int cut;
  /* argv had more words than were read. */
  int more_words;
  /* The file is not there as the process sees it: the kernel refuses the exec itself. */
  int missing;
};

/* Installs the filter on the calling process (which never execs after: its children inherit it),
 * with no_new_privs first where the process lacks CAP_SYS_ADMIN: the listener's fd, or -errno
 * with `*call` set (-EBUSY where a filter with a listener is already installed above it). */
int install_exec_filter(const char **call);

/* Receives the next notification into `request` (sized by the kernel: exec_notify_alloc): 0, or
 * -errno (-ENOENT: its process died meanwhile). */
int receive_exec(int listener, struct seccomp_notif *request);

/* Allocates a notification and a response as the kernel sizes them: 0 or -errno. */
int exec_notify_alloc(struct seccomp_notif **request, struct seccomp_notif_resp **response);

/* Reads the exec of `request` (its program, resolved as its process sees it: exec-resolve.h, NULL
 * where it could not be; and up to `words` of argv): 0, or -errno,
 * the errno the exec itself would fail with (EFAULT for an unreadable argument, ENAMETOOLONG).
 * `exec` starts with fd -1 (a zeroed one does not). */
int read_exec(const struct seccomp_notif *request, int words, struct exec_read *exec);

/* Reads up to `words` of the argv of `request` again into `exec` (read_exec's): 0, or -errno. */
int read_exec_words(const struct seccomp_notif *request, int words, struct exec_read *exec);

/* Writes `name` as thread `pid` names it, made absolute from its cwd: 0, or -errno. */
int task_absolute_path(pid_t pid, const char *name, char *out, size_t size);

/* Lets the exec of notification `id` go on (`err` 0) or fails it with -`err`: 0, or -errno
 * (-ENOENT: its process died meanwhile, or a signal made it start the exec again). */
int answer_exec(int listener, struct seccomp_notif_resp *response, uint64_t id, int err);

/* Whether `request` is a mount or an fsopen (the filter hands them over too), not an exec. */
int is_mount_call(const struct seccomp_notif *request);

/* Whether the mount or fsopen of `request` makes a filesystem (not a bind, a remount, a move or a
 * change of propagation), told by its flags alone: they are in the call's registers, which the
 * task cannot change once it has made the call, where its type is in its memory, which it can. */
int makes_filesystem(const struct seccomp_notif *request);

/* Whether notification `id` still waits for its answer. */
int exec_waits(int listener, uint64_t id);

#endif
