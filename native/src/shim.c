/* hive-task-shim: the root of one task's process tree.
 *
 *   hive-task-shim [-t] PARENT_PID CGROUP_DIR|- PROGRAM [ARG...]
 *
 * fd 0-2 are the task's stdio; fd 3 reads control lines from the daemon ("kill N"); fd 4 gets
 * status lines for it ("start PID", "exit CODE", "signal N", "error TEXT"). With -t, fd 0 is a
 * terminal: the shim (a session leader, as the spawner starts it) makes it its session's
 * controlling terminal and the leader's process group its foreground group, so the task reads and
 * writes it as a program run from a shell does.
 *
 * The shim makes itself the child subreaper of its subtree, so descendants that double-fork or
 * setsid come back to it and are reaped here, never by the daemon (which must not reap what libuv
 * did not spawn). It starts PROGRAM as the leader, in a process group of its own (so the task's
 * `kill 0` cannot reach the shim) and in CGROUP_DIR when given (joined before exec, so nothing the
 * task forks escapes it); reports "start" only once the leader has exec'd, so a kill that follows
 * at once finds it in its cgroup; reports the leader's end; and exits once its subtree is empty.
 * The shim dies with PARENT_PID, the spawner that started it, and the leader with the shim
 * (PR_SET_PDEATHSIG, checked after it is set). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "tree.h"

#define CONTROL_FD 3
#define STATUS_FD 4
#define KILL_ROUNDS 100

static const char *cgroup_dir = NULL;
static int on_terminal = 0;

static void report(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof line - 1, format, args);
  va_end(args);
  if (length < 0) return;
  if (length > (int)sizeof line - 2) length = sizeof line - 2;
  line[length++] = '\n';
  /* The daemon may be gone (EPIPE, with SIGPIPE blocked): nothing to do but carry on. */
  ssize_t ignored = write(STATUS_FD, line, (size_t)length);
  (void)ignored;
}

static int register_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -errno; }

/* SIGKILL when the spawning thread dies; if it already died, the parent is no longer the original. */
static int die_with_parent(pid_t expected_parent) {
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -errno;
  return getppid() == expected_parent ? 0 : -ESRCH;
}

/* In the leader before exec: a failure is written to `sync` as its reason, then the leader exits. */
static void fail_start(int sync, const char *what, int err) {
  dprintf(sync, "%s: %s", what, strerror(err));
  _exit(125);
}

static void exec_leader(char **argv, pid_t shim, int sync) {
  if (setpgid(0, 0) != 0) fail_start(sync, "setpgid", errno);
  /* Signals are still blocked here, so tcsetpgrp from what is yet a background group is not stopped by SIGTTOU. */
  if (on_terminal && tcsetpgrp(0, getpid()) != 0) fail_start(sync, "cannot take the terminal's foreground", errno);
  if (die_with_parent(shim) != 0) fail_start(sync, "the shim is gone", ESRCH);
  if (cgroup_dir != NULL) {
    int err = join_cgroup(cgroup_dir);
    if (err < 0) fail_start(sync, "cannot enter the task's cgroup", -err);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  execvp(argv[0], argv); /* on success, exec closes `sync` (close-on-exec): the parent sees EOF */
  int err = errno;
  dprintf(2, "hive-task-shim: %s: %s\n", argv[0], strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

/* Waits until the leader has exec'd (EOF on `sync`) or failed (its reason on `sync`). */
static int await_exec(int sync, char *reason, size_t size) {
  size_t used = 0;
  for (;;) {
    ssize_t got = read(sync, reason + used, size - used - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    used += (size_t)got;
    if (used == size - 1) break;
  }
  reason[used] = '\0';
  close(sync);
  return used == 0 ? 0 : -1;
}

/* Reaps every exited child; reports the leader's end. Returns 1 once no child is left. */
static int reap_children(pid_t leader, int *leader_done) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == 0) return 0;
    if (pid < 0) return errno == ECHILD ? 1 : 0;
    if (pid != leader) continue;
    *leader_done = 1;
    if (WIFSIGNALED(status)) report("signal %d", WTERMSIG(status));
    else report("exit %d", WEXITSTATUS(status));
  }
}

static void kill_tree(int sig, pid_t leader, int *leader_done) {
  if (cgroup_dir != NULL) {
    if (sig == SIGKILL) kill_cgroup(cgroup_dir);
    else signal_cgroup(cgroup_dir, sig);
    return;
  }
  if (sig != SIGKILL) {
    signal_descendants(getpid(), sig);
    return;
  }
  /* Without a cgroup a forking process can outrun one pass: repeat until nothing is left. */
  for (int round = 0; round < KILL_ROUNDS && signal_descendants(getpid(), SIGKILL) > 0; round++) {
    reap_children(leader, leader_done);
    usleep(1000);
  }
}

/* Applies each complete "kill N" line read from the control fd; returns 0 at EOF. */
static int read_control(char *buffer, size_t *used, size_t size, pid_t leader, int *leader_done) {
  ssize_t length = read(CONTROL_FD, buffer + *used, size - *used - 1);
  if (length <= 0) return length < 0 && errno == EINTR;
  *used += (size_t)length;
  buffer[*used] = '\0';
  char *line = buffer, *newline;
  while ((newline = strchr(line, '\n')) != NULL) {
    *newline = '\0';
    int sig;
    if (sscanf(line, "kill %d", &sig) == 1 && sig > 0 && sig < NSIG) kill_tree(sig, leader, leader_done);
    line = newline + 1;
  }
  *used = strlen(line);
  memmove(buffer, line, *used);
  return 1;
}

/* Every signal that can be blocked is: the shim must outlive anything the task sends it. */
static int block_signals(void) {
  sigset_t set;
  sigfillset(&set);
  if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) return -1;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int supervise(pid_t leader, int child_events) {
  struct pollfd fds[2] = {{.fd = child_events, .events = POLLIN}, {.fd = CONTROL_FD, .events = POLLIN}};
  char control[256];
  size_t used = 0;
  int leader_done = 0;
  for (;;) {
    if (reap_children(leader, &leader_done) && leader_done) return 0;
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return 1;
    if (fds[0].revents & POLLIN) {
      struct signalfd_siginfo info;
      while (read(child_events, &info, sizeof info) > 0) {
      }
    }
    if (fds[1].revents & (POLLIN | POLLHUP)) {
      /* The daemon closed control: keep reaping; PR_SET_PDEATHSIG covers its death. */
      if (!read_control(control, &used, sizeof control, leader, &leader_done)) fds[1].fd = -1;
    }
  }
}

/* Makes fd 0 this session's controlling terminal, with UTF-8 aware line editing. */
static int take_terminal(void) {
  if (ioctl(0, TIOCSCTTY, 0) != 0) return -errno;
  struct termios modes;
  if (tcgetattr(0, &modes) == 0) {
    modes.c_iflag |= IUTF8;
    tcsetattr(0, TCSANOW, &modes);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-t") == 0) {
    on_terminal = 1;
    argv++;
    argc--;
  }
  if (argc < 4) {
    dprintf(2, "usage: hive-task-shim [-t] PARENT_PID CGROUP_DIR|- PROGRAM [ARG...]\n");
    return 125;
  }
  pid_t parent = (pid_t)strtol(argv[1], NULL, 10);
  if (strcmp(argv[2], "-") != 0) cgroup_dir = argv[2];
  fcntl(CONTROL_FD, F_SETFD, FD_CLOEXEC);
  fcntl(STATUS_FD, F_SETFD, FD_CLOEXEC);
  int child_events = block_signals();
  int err = child_events < 0 ? -errno : register_subreaper();
  if (err == 0) err = die_with_parent(parent);
  if (err == 0 && on_terminal) err = take_terminal();
  int sync[2];
  if (err == 0 && pipe2(sync, O_CLOEXEC) != 0) err = -errno;
  if (err < 0) {
    report("error shim setup failed: %s", strerror(-err));
    return 125;
  }
  pid_t shim = getpid();
  pid_t leader = fork();
  if (leader < 0) {
    report("error fork failed: %s", strerror(errno));
    return 125;
  }
  if (leader == 0) {
    close(sync[0]);
    exec_leader(argv + 3, shim, sync[1]);
  }
  close(sync[1]);
  char reason[256];
  if (await_exec(sync[0], reason, sizeof reason) == 0) report("start %d", leader);
  else report("error %s", reason);
  return supervise(leader, child_events);
}
