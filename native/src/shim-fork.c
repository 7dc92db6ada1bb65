/* The spawner's fork of itself that becomes a task's shim. Measured on a machine of this project's
 * kind, an exec of the shim's executable (the dynamic loader, libc's start, the page faults of a
 * fresh image) was about half of the shim's own CPU per task; the spawner is small and
 * single-threaded, so a fork of it copies little and may run any code until it execs. */
#define _GNU_SOURCE
#include "shim-fork.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/prctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "sys.h"

#include "fdpass.h"
#include "shim.h"

#define SHIM_NAME "hive-task-shim"

extern char **environ;

/* This process's code and data bounds, as PR_SET_MM_MAP must be given them again. */
static struct prctl_mm_map layout;
static int layout_loaded = 0;

int load_memory_layout(void) {
  char buffer[1024];
  int err = read_small_file(AT_FDCWD, "/proc/self/stat", buffer, sizeof buffer);
  if (err < 0) return err;
  /* The name field may hold spaces and parentheses: fields are counted from the last ')', which
   * ends field 2; field 26 is startcode, 45 start_data (proc(5)). */
  char *end = strrchr(buffer, ')');
  if (end == NULL) return -EINVAL;
  unsigned long long values[52] = {0};
  int field = 3;
  char *state = NULL;
  for (char *token = strtok_r(end + 2, " ", &state); token != NULL && field < 52; token = strtok_r(NULL, " ", &state)) {
    values[field++] = strtoull(token, NULL, 10);
  }
  if (field < 48) return -EINVAL;
  layout.start_code = values[26];
  layout.end_code = values[27];
  layout.start_stack = values[28];
  layout.start_data = values[45];
  layout.end_data = values[46];
  layout.start_brk = values[47];
  layout.exe_fd = (__u32)-1;
  layout_loaded = 1;
  return 0;
}

/* Points /proc/self/cmdline and /proc/self/environ at the task's strings, so the shim shows there
 * what its executable would have shown. Unprivileged (kernels with CONFIG_CHECKPOINT_RESTORE);
 * where the kernel refuses it they show the spawner's, which nothing relies on for a shim. */
static void show_command_line(char **argv, char **envp) {
  if (!layout_loaded) return;
  struct prctl_mm_map map = layout;
  int argc = 0;
  while (argv[argc] != NULL) argc++;
  map.brk = (__u64)syscall(SYS_brk, 0);
  map.arg_start = (__u64)(unsigned long)argv[0];
  map.arg_end = (__u64)(unsigned long)(argv[argc - 1] + strlen(argv[argc - 1]) + 1);
  map.env_start = map.env_end = map.arg_end;
  for (int i = 0; envp[i] != NULL; i++) map.env_end = (__u64)(unsigned long)(envp[i] + strlen(envp[i]) + 1);
  prctl(PR_SET_MM, PR_SET_MM_MAP, &map, sizeof map, 0);
}

static void close_from(int lowest) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  closefrom(lowest);
#else
  if (syscall(SYS_close_range, lowest, ~0U, 0) == 0) return;
  for (long fd = lowest, top = sysconf(_SC_OPEN_MAX); fd < top; fd++) close((int)fd);
#endif
}

/* In the fork: fds 0..nfds-1 from `fds`, `*sync` moved to nfds, nothing else open. 0 or -errno;
 * `*sync` always names the report pipe. Every source is first copied above the targets, so no
 * dup2 overwrites a source not yet used (and dup2 onto its own number would keep FD_CLOEXEC). */
static int take_fds(const int *fds, int nfds, int *sync) {
  int lifted[FDPASS_MAX_FDS + 1];
  for (int i = 0; i <= nfds; i++) {
    lifted[i] = fcntl(i < nfds ? fds[i] : *sync, F_DUPFD, nfds + 1);
    if (lifted[i] < 0) return -errno;
  }
  *sync = lifted[nfds];
  for (int i = 0; i <= nfds; i++) {
    if (dup2(lifted[i], i) < 0) return -errno;
  }
  *sync = nfds;
  close_from(nfds + 1);
  return 0;
}

/* Where the scheduler groups each session (sched_autogroup_enabled, for processes outside any
 * cgroup of the cpu controller), a nice value counts only against the session's own processes: the
 * new session's group takes the nice this process has from its spawner (the tasks' CPU weight where
 * no cgroup gives it, src/process/cpu-weight.ts). Best effort: the kernel refuses an unprivileged
 * write more often than ten times a second (EAGAIN), and one without autogroups has no such file. */
static void weigh_session(void) {
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, 0);
  if (nice <= 0 || errno != 0) return;
  int fd = open("/proc/self/autogroup", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return;
  dprintf(fd, "%d", nice);
  close(fd);
}

/* The fork's set-up before it runs the shim; tells the spawner how it went on `sync`. */
static void start_shim(char **argv, char **envp, const char *cwd, const int *fds, int nfds, int sync) __attribute__((noreturn));
static void start_shim(char **argv, char **envp, const char *cwd, const int *fds, int nfds, int sync) {
  int err = setsid() < 0 ? -errno : 0;
  if (err == 0) weigh_session();
  if (err == 0) err = take_fds(fds, nfds, &sync);
  if (err == 0 && cwd != NULL && chdir(cwd) != 0) err = -errno;
  if (err < 0) {
    int code = -err;
    /* Should this write fail, the spawner reads EOF as a start, and the task ends unreported. */
    ssize_t told = write(sync, &code, sizeof code);
    _exit(told < 0 ? 126 : 127);
  }
  prctl(PR_SET_NAME, SHIM_NAME, 0, 0, 0);
  show_command_line(argv, envp);
  environ = envp; /* what the leader's execvp searches PATH in and passes on */
  close(sync);    /* EOF: the spawner answers with this pid */
  int argc = 0;
  while (argv[argc] != NULL) argc++;
  _exit(run_shim(argc, argv));
}

int fork_shim(char **argv, char **envp, const char *cwd, const int *fds, int nfds, pid_t *pid_out) {
  if (nfds > FDPASS_MAX_FDS || argv[0] == NULL) return -EINVAL;
  int sync[2];
  if (pipe2(sync, O_CLOEXEC) != 0) return -errno;
  pid_t pid = fork();
  if (pid < 0) {
    int err = -errno;
    close(sync[0]);
    close(sync[1]);
    return err;
  }
  if (pid == 0) {
    close(sync[0]);
    start_shim(argv, envp, cwd, fds, nfds, sync[1]);
  }
  close(sync[1]);
  int code = 0;
  ssize_t got;
  do got = read(sync[0], &code, sizeof code);
  while (got < 0 && errno == EINTR);
  int err = got < 0 ? -errno : got == sizeof code ? -code : 0;
  close(sync[0]);
  if (err < 0) {
    kill(pid, SIGKILL); /* it has failed, or its state is unknown: it must not run */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return err;
  }
  *pid_out = pid;
  return 0;
}
