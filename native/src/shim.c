/* hive-task-shim: the root of one task's process tree.
 *
 *   hive-task-shim [-t | -o BYTES] [-s FD] [-P FD] [-p FD] [-S] [-N] [-L] [-F] [-w DIR]... [-D FD] [-j DIR]... PARENT_PID CGROUP_DIR|- PROGRAM [ARG...]
 *
 * Its own executable (shim-main.c) runs this code, and so does a fork of the spawner asked for the
 * shim (shim-fork.c), which starts a task without exec'ing this image.
 *
 * fd 0-2 are the task's stdio; fd 3 reads control lines from the daemon ("kill N"); fd 4 gets
 * status lines for it, as the table at the top of shim-status.c says. With -o BYTES, fds 1 and 2
 * are the task's output files, open for writing: the leader gets a pipe for each instead, and the
 * shim copies what comes into the file (shim-output.c), keeping at most BYTES of each stream (0:
 * all); the shim exits only once its subtree is gone and both pipes are at EOF. With
 * -t, fd 0 is a terminal: the shim (a session leader, as the spawner starts it) makes it its
 * session's controlling terminal and the leader's process group its foreground group, so the task
 * reads and writes it as a program run from a shell does. With -s FD, the leader gets FD as its fd 3
 * (the task's command text, which its bash reads from there, so the text is in no command line).
 * With -P FD, FD is a directory fd of the host's /proc, for a shim started in the tasks' own PID
 * namespace: "start" then gives the leader's pid in both, "start PID HOST_PID". The sandbox (set
 * up in the leader before its exec, so the whole task inherits it; sandbox.h): -S gives the leader
 * a mount namespace of its own with a devpts instance of its own, drops the capabilities a task has
 * no use for and refuses typing into terminals; -N (which implies -S) adds a network namespace of
 * its own with only loopback up; -L (which implies -S) makes every mount read-only but each -w DIR
 * (each resolved by the daemon: a symlink in its path is refused) and confines writes with Landlock
 * to beneath them (and the devices a shell needs). -F (with -S) sets the sandbox up without any
 * namespace, where the daemon can have none: no_new_privs, Landlock (writes beneath each -w DIR with
 * -L, else a domain of its own) and the seccomp filter, which with -N refuses every socket but a
 * unix one in place of a network namespace. -D FD is the detached devpts mount that holds
 * the terminal of a sandboxed task on one (-t): it becomes the task's /dev/pts. With -p FD, FD
 * holds the operator's command policy (exec-policy.h): every exec of the task but the leader's own
 * is matched against it, and its "policy-..." lines join the status lines. Usage errors are told
 * on stderr as "hive-task-shim: CALL: ...".
 *
 * The shim makes itself the child subreaper of its subtree, so descendants that double-fork or
 * setsid come back to it and are reaped here, never by the daemon (which must not reap what libuv
 * did not spawn). It starts PROGRAM as the leader, in a process group of its own (so the task's
 * `kill 0` cannot reach the shim) and in CGROUP_DIR when given (created in it, or where that cannot
 * be had joined before exec: nothing the task forks escapes it); reports "start" only once the
 * leader has exec'd, so a kill that follows at once finds it in its cgroup; joins each -j DIR too
 * (the cgroup v1 hierarchies that hold a task's memory, pids and cpu limits on hosts whose v2 tree
 * lacks those controllers); reports the leader's end; and exits once its subtree is empty.
 * The shim dies with PARENT_PID, the spawner that started it, and the leader with the shim
 * (PR_SET_PDEATHSIG, checked after it is set).
 *
 * Its parts: this file reads the command line, sets the shim up and runs its loop; shim-leader.c
 * starts the leader, shim-signals.c kills and reaps, shim-status.c tells the daemon (the status
 * protocol) and the task, shim-output.c copies the output (-o). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <termios.h>
#include <unistd.h>

#include "parse.h"
#include "sys.h"
#include "exec-policy.h"
#include "shim.h"
#include "shim-parts.h"

#define USAGE "usage: hive-task-shim [-t | -o BYTES] [-s FD] [-P FD] [-p FD] [-S] [-N] [-L] [-F] [-w DIR]... [-D FD] [-j DIR]... PARENT_PID CGROUP_DIR|- PROGRAM [ARG...]\n"
/* With -o, the most bytes of one stream copied in one turn of the loop. */
#define OUTPUT_BUDGET (4LL * 1024 * 1024)

struct shim_state shim = {
    .script_fd = -1, .host_proc_fd = -1, .devpts_fd = -1, .policy_fd = -1, .policy_listener = -1, .leader_outputs = {-1, -1}};
const char *const output_names[2] = {"stdout", "stderr"};

/* A bad command line: the call and the usage on stderr, and an error line. Returns 125. */
static int fail_usage(int err, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int fail_usage(int err, const char *format, ...) {
  FORMAT_CALL(call, format);
  dprintf(2, "hive-task-shim: %s: %s\n" USAGE, call, strerror(err));
  report("error %d %s", err, call);
  return 125;
}

static int set_close_on_exec(int fd) { return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 ? 0 : -errno; }

static int register_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -errno; }

/* No task may trace its shim, its parent and its policy's judge, nor read or write its memory in
 * /proc; the leader's exec of bash makes the task's own processes dumpable again. */
static int refuse_tracing(void) { return prctl(PR_SET_DUMPABLE, 0) == 0 ? 0 : -errno; }

static int supervise(pid_t leader, int child_events) {
  struct pollfd fds[6] = {{.fd = child_events, .events = POLLIN},
                          {.fd = CONTROL_FD, .events = POLLIN},
                          {.fd = -1, .events = POLLIN},
                          {.fd = -1, .events = POLLIN},
                          {.fd = -1, .events = POLLPRI},
                          {.fd = shim.policy_listener, .events = POLLIN}};
  char control[256];
  size_t used = 0;
  int leader_done = 0, err;
  for (;;) {
    int emptying = cgroup_emptying();
    if (emptying) reap_leader(leader, &leader_done);
    else if (reap_children(leader, &leader_done) && leader_done && (!shim.copying_output || (shim.outputs[0].pipe < 0 && shim.outputs[1].pipe < 0))) {
      if (shim.copying_output) report("output %lld %lld", shim.outputs[0].produced, shim.outputs[1].produced);
      report_subtree_cpu();
      return 0;
    }
    /* While the cgroup empties, its change wakes the loop; SIGCHLD only until the leader is reaped. */
    fds[0].fd = emptying && leader_done ? -1 : child_events;
    fds[4].fd = emptying ? emptying_events_fd() : -1;
    for (int i = 0; shim.copying_output && i < 2; i++) fds[2 + i].fd = shim.outputs[i].pipe;
    if (poll(fds, 6, -1) < 0 && errno != EINTR) {
      log_failure(errno, "poll");
      return 1;
    }
    if ((fds[0].revents & POLLIN) && (err = drain_signalfd(child_events)) < 0) {
      log_failure(-err, "read signalfd SIGCHLD");
      return 1;
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      /* The daemon closed control: keep reaping; PR_SET_PDEATHSIG covers its death. */
      if (!read_control(control, &used, sizeof control, leader, &leader_done)) fds[1].fd = -1;
    }
    for (int i = 0; i < 2; i++) {
      if (fds[2 + i].fd >= 0 && (fds[2 + i].revents & (POLLIN | POLLHUP | POLLERR))) copy_output(i, OUTPUT_BUDGET);
    }
    if (fds[5].revents & POLLIN) exec_policy_serve(0);
    if (shim.policy_listener >= 0) exec_policy_sweep();
  }
}

/* With -p: the command policy's filter on the shim itself, before the leader inherits it. */
static int start_policy(const char **call) {
  if (shim.policy_fd < 0) return 0;
  static const struct exec_policy_io io = {.report = report_line, .tell_task = tell_task};
  int listener = exec_policy_start(shim.policy_fd, &io, call);
  close(shim.policy_fd);
  if (listener < 0) return listener;
  shim.policy_listener = listener;
  return 0;
}

/* Makes fd 0 this session's controlling terminal, with UTF-8 aware line editing. */
static int take_terminal(const char **call) {
  struct termios modes;
  *call = "ioctl TIOCSCTTY fd 0";
  if (ioctl(0, TIOCSCTTY, 0) != 0) return -errno;
  *call = "tcgetattr fd 0";
  if (tcgetattr(0, &modes) != 0) return -errno;
  modes.c_iflag |= IUTF8;
  *call = "tcsetattr fd 0 IUTF8";
  return tcsetattr(0, TCSANOW, &modes) == 0 ? 0 : -errno;
}

/* The single-letter switches: -t, -S, -N, -L, -F. */
static int is_switch(const char *arg) { return arg[0] == '-' && arg[1] != '\0' && strchr("tSNLF", arg[1]) != NULL && arg[2] == '\0'; }

/* The options that give an fd: -s, -P, -D, -p. */
static int is_fd_option(const char *arg) { return arg[0] == '-' && arg[1] != '\0' && strchr("sPDp", arg[1]) != NULL && arg[2] == '\0'; }

static int *fd_option_of(char letter) {
  return letter == 's' ? &shim.script_fd : letter == 'P' ? &shim.host_proc_fd : letter == 'D' ? &shim.devpts_fd : &shim.policy_fd;
}

static int *switch_of(char letter) {
  return letter == 't'   ? &shim.on_terminal
         : letter == 'S' ? &shim.sandboxed
         : letter == 'N' ? &shim.isolated_network
         : letter == 'F' ? &shim.without_namespaces
                         : &shim.confined_writes;
}

/* N of a cgroup folder given as /proc/self/fd/N (one opened outside the tasks' mount namespace,
 * where every cgroup mount is read-only: launch-native.ts), or -1. */
static int fd_of_proc_path(const char *path) {
  static const char prefix[] = "/proc/self/fd/";
  long fd;
  if (path == NULL || strncmp(path, prefix, sizeof prefix - 1) != 0) return -1;
  return parse_decimal(path + sizeof prefix - 1, STATUS_FD + 1, INT_MAX, &fd) < 0 ? -1 : (int)fd;
}

int run_shim(int argc, char **argv) {
  for (;;) {
    if (argc > 1 && is_switch(argv[1])) {
      *switch_of(argv[1][1]) = 1;
      argv++;
      argc--;
    } else if (argc > 2 && strcmp(argv[1], "-w") == 0) {
      if (shim.write_count == MAX_WRITE_DIRS) return fail_usage(E2BIG, "argv: more than %d -w folders", MAX_WRITE_DIRS);
      shim.write_dirs[shim.write_count++] = argv[2];
      argv += 2;
      argc -= 2;
    } else if (argc > 2 && is_fd_option(argv[1])) {
      long fd;
      if (parse_decimal(argv[2], STATUS_FD + 1, INT_MAX, &fd) < 0) return fail_usage(EINVAL, "argv: %s '%.32s' (an fd above %d)", argv[1], argv[2], STATUS_FD);
      *fd_option_of(argv[1][1]) = (int)fd;
      argv += 2;
      argc -= 2;
    } else if (argc > 2 && strcmp(argv[1], "-o") == 0) {
      long bytes;
      if (parse_decimal(argv[2], 0, LONG_MAX, &bytes) < 0) return fail_usage(EINVAL, "argv: -o '%.32s' (bytes, from 0)", argv[2]);
      shim.copying_output = 1;
      shim.max_output = bytes;
      argv += 2;
      argc -= 2;
    } else if (argc > 2 && strcmp(argv[1], "-j") == 0) {
      if (shim.joined_count == MAX_JOINED) return fail_usage(E2BIG, "argv: more than %d -j cgroups", MAX_JOINED);
      shim.joined_dirs[shim.joined_count++] = argv[2];
      argv += 2;
      argc -= 2;
    } else {
      break;
    }
  }
  if (argc < 4) return fail_usage(EINVAL, "argv: %d arguments where at least 3 are needed", argc - 1);
  shim.sandboxed |= shim.isolated_network | shim.confined_writes;
  long parent;
  int err = parse_decimal(argv[1], 1, INT_MAX, &parent);
  if (err < 0) return fail_usage(-err, "strtol PARENT_PID '%.64s' (a pid, from 1)", argv[1]);
  if (strcmp(argv[2], "-") != 0) shim.cgroup_dir = argv[2];
  int own_fds[6 + 1 + MAX_JOINED] = {CONTROL_FD, STATUS_FD, shim.script_fd, shim.host_proc_fd, shim.devpts_fd, shim.policy_fd};
  size_t own_count = 6;
  own_fds[own_count++] = fd_of_proc_path(shim.cgroup_dir);
  for (int i = 0; i < shim.joined_count; i++) own_fds[own_count++] = fd_of_proc_path(shim.joined_dirs[i]);
  for (size_t i = 0; i < own_count; i++) {
    int fd = own_fds[i];
    if (fd < 0 || (err = set_close_on_exec(fd)) == 0) continue;
    dprintf(2, "hive-task-shim: fcntl F_SETFD FD_CLOEXEC fd %d: %s\n", fd, strerror(-err));
    report("error %d fcntl F_SETFD FD_CLOEXEC fd %d", -err, fd);
    return 125;
  }
  if ((err = block_signals()) < 0) return fail_setup(-err, "sigprocmask SIG_BLOCK all");
  int child_events = open_child_events();
  if (child_events < 0) return fail_setup(-child_events, "signalfd SIGCHLD");
  if ((err = register_subreaper()) < 0) return fail_setup(-err, "prctl PR_SET_CHILD_SUBREAPER");
  if ((err = refuse_tracing()) < 0) return fail_setup(-err, "prctl PR_SET_DUMPABLE 0");
  if ((err = set_death_signal()) < 0) return fail_setup(-err, "prctl PR_SET_PDEATHSIG");
  if ((err = check_parent((pid_t)parent)) < 0) return fail_setup(-err, "getppid: the spawner is gone");
  const char *call;
  if (shim.on_terminal && (err = take_terminal(&call)) < 0) return fail_setup(-err, "%s", call);
  for (int i = 0; shim.copying_output && i < 2; i++) {
    if ((err = output_open(&shim.outputs[i], i + 1, &shim.leader_outputs[i])) < 0) return fail_setup(-err, "pipe2 (%s)", output_names[i]);
  }
  if ((err = start_policy(&call)) < 0) return fail_setup(-err, "%s", call);
  int sync[2];
  if (pipe2(sync, O_CLOEXEC) != 0) return fail_setup(errno, "pipe2");
  pid_t leader = start_leader(argv + 3, sync);
  if (leader < 0) return fail_setup(errno, "vfork");
  close(sync[1]);
  for (int i = 0; shim.copying_output && i < 2; i++) close(shim.leader_outputs[i]); /* EOF comes once the task's own copies are gone */
  if (shim.script_fd >= 0) close(shim.script_fd); /* the leader has its own copy, or failed */
  if (shim.devpts_fd >= 0) close(shim.devpts_fd); /* attached in the leader's mount namespace, or failed */
  char reason[LINE_MAX_BYTES - 16];
  int state = await_exec(sync[0], reason, sizeof reason, leader);
  if (state == 0) report_start(leader);
  else if (state > 0) report("error %s", reason);
  else {
    fail_setup(-state, "read the leader's exec pipe");
    kill(leader, SIGKILL); /* its start is unknown: it must not run unreported */
  }
  return supervise(leader, child_events);
}
