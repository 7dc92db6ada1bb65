/* The shim's signals: every signal blocked, SIGCHLD read from a signalfd; kills from the daemon's
 * control lines ("kill N") sent to the task's cgroup or, without one, its process group and
 * descendants; its subtree reaped as the subreaper it is, and the leader's end reported. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec-policy.h"
#include "parse.h"
#include "shim-parts.h"
#include "sys.h"
#include "tree.h"

#define KILL_ROUNDS 100

/* The leader has exited with `status`: what it wrote goes into the files, then its end is told. */
static void leader_exited(int status, int *leader_done) {
  *leader_done = 1;
  /* What the leader wrote is all in the pipes now: it goes into the files (or is dropped) before
   * its end is told. */
  for (int i = 0; shim.copying_output && i < 2; i++) copy_output(i, output_pending(&shim.outputs[i]));
  /* The daemon may be gone (EPIPE, with SIGPIPE blocked): nothing to do but carry on. */
  if (WIFSIGNALED(status)) report("signal %d", WTERMSIG(status));
  else report("exit %d", WEXITSTATUS(status));
}

/* Reaps every exited child; reports the leader's end. Returns 1 once no child is left. */
int reap_children(pid_t leader, int *leader_done) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == 0) return 0;
    if (pid < 0) return errno == ECHILD ? 1 : 0;
    if (pid == leader) leader_exited(status, leader_done);
  }
}

/* Reaps the leader alone if it has exited: a wait for one pid does not walk the other children. */
void reap_leader(pid_t leader, int *leader_done) {
  int status;
  if (!*leader_done && waitpid(leader, &status, WNOHANG) == leader) leader_exited(status, leader_done);
}

/* After a SIGKILL to the task's cgroup: its cgroup.events, until it says the cgroup is empty, or
 * -1. Until then only the leader is reaped: reaping each of the dying processes as its SIGCHLD
 * came took the CPU they needed to die (on two cores, 12 kills of 1,000 sleeps by a standalone
 * shim: 8.4 ms of the shim's CPU fell before the cgroup was empty, 3.7 ms now, and the cgroup
 * emptied in 82.9 ms against 87.6 at the median). Once it is empty they are all zombies, reaped in
 * one pass. The end's report came as before (89.9 against 88.3 ms), and the shim's CPU in all was
 * the same (9.9 against 11.9 ms): what this buys is the processes dead sooner, not less work. */
static int emptying_fd = -1;

int emptying_events_fd(void) { return emptying_fd; }

/* Starts watching the killed cgroup empty; without its cgroup.events, children are reaped as usual. */
static void watch_cgroup_empty(void) {
  if (emptying_fd >= 0) return;
  const char *call;
  int fd = open_cgroup_events(shim.cgroup_dir, &call);
  if (fd < 0) log_failure(-fd, "%s %s/cgroup.events", call, shim.cgroup_dir);
  else emptying_fd = fd;
}

/* Whether the killed cgroup is still emptying; once it is empty (or unreadable) the watch ends. */
int cgroup_emptying(void) {
  if (emptying_fd < 0) return 0;
  if (cgroup_populated(emptying_fd) == 1) return 1;
  close(emptying_fd);
  emptying_fd = -1;
  return 0;
}

/* Says "signalled" the first time a kill finds the leader not yet exited: then the kill may be
 * what ended it. A leader that exited by itself before the kill reached the shim (a zombie not yet
 * reaped) ended on its own, and its task is not told as killed. */
static void note_kill(pid_t leader, int leader_done) {
  static int noted = 0;
  siginfo_t info = {0};
  if (noted || leader_done) return;
  if (waitid(P_PID, (id_t)leader, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != 0) return;
  noted = 1;
  report("signalled");
}

static void kill_tree(int sig, pid_t leader, int *leader_done) {
  const char *call = NULL;
  int result;
  note_kill(leader, *leader_done);
  if (shim.cgroup_dir != NULL) {
    if (sig == SIGKILL && (result = kill_cgroup(shim.cgroup_dir, &call)) < 0) log_failure(-result, "%s %s/cgroup.kill", call, shim.cgroup_dir);
    if (sig == SIGKILL && result == 0) watch_cgroup_empty();
    if (sig != SIGKILL && (result = signal_cgroup(shim.cgroup_dir, sig, &call)) < 0) log_failure(-result, "%s (signal %d to cgroup %s)", call, sig, shim.cgroup_dir);
    /* A process that moved itself out of the cgroup (a task that is root may write the cgroup.procs
     * of the tasks' folder) is still a descendant of this subreaper: SIGKILL finds it by descent too. */
    if (sig != SIGKILL) return;
  } else if (sig != SIGKILL) {
    if ((result = signal_descendants(sig, &call)) < 0) log_failure(-result, "%s (signal %d to the shim's descendants)", call, sig);
    return;
  }
  /* The leader's process group first, in one call: it holds the task's `&` jobs (bash -c has no
   * job control), so most of the task is dying before the walk reads /proc. Only while the leader
   * is unreaped: until then no other process can take its pid, so the group of that id is the task's. */
  if (shim.cgroup_dir == NULL && !*leader_done && kill(-leader, SIGKILL) != 0 && errno != ESRCH)
    log_failure(errno, "kill -%d SIGKILL (the leader's process group)", leader);
  /* What left the group (setsid, setpgid) is found by descent; a forking process can outrun one
   * pass, so repeat until nothing is left. */
  for (int round = 0; round < KILL_ROUNDS && (result = signal_descendants(SIGKILL, &call)) > 0; round++) {
    reap_children(leader, leader_done);
    usleep(1000);
  }
  if (result < 0) log_failure(-result, "%s (signal %d to the shim's descendants)", call, SIGKILL);
}

/* Applies each complete "kill N" line read from the control fd; returns 0 at EOF. A line that
 * fills the buffer without its end is dropped, with a message, up to its newline: the shim goes on
 * taking kills after it. */
int read_control(char *buffer, size_t *used, size_t size, pid_t leader, int *leader_done) {
  static int dropping = 0;
  if (*used == size - 1) {
    log_failure(E2BIG, "control line of over %zu bytes without a newline: dropped", size - 2);
    *used = 0;
    dropping = 1;
  }
  ssize_t length = read(CONTROL_FD, buffer + *used, size - *used - 1);
  if (length < 0 && errno == EINTR) return 1;
  /* ECONNRESET: the daemon closed its end with status lines unread; that is its end too. */
  if (length < 0 && errno != ECONNRESET) log_failure(errno, "read fd %d (control)", CONTROL_FD);
  if (length <= 0) return 0;
  *used += (size_t)length;
  buffer[*used] = '\0';
  char *line = buffer, *newline;
  if (dropping) {
    if ((newline = strchr(line, '\n')) == NULL) {
      *used = 0;
      return 1;
    }
    dropping = 0;
    line = newline + 1;
  }
  while ((newline = strchr(line, '\n')) != NULL) {
    *newline = '\0';
    long sig;
    int err = strncmp(line, "kill ", 5) == 0 ? parse_decimal(line + 5, 1, NSIG - 1, &sig) : -EINVAL;
    if (err == 0) kill_tree((int)sig, leader, leader_done);
    else if (shim.policy_listener < 0 || (err = exec_policy_control(line)) <= 0) log_failure(err < 0 ? -err : EINVAL, "parse control line '%.64s'", line);
    line = newline + 1;
  }
  *used = strlen(line);
  memmove(buffer, line, *used);
  return 1;
}

/* Every signal that can be blocked is: the shim must outlive anything the task sends it. */
int block_signals(void) {
  sigset_t set;
  sigfillset(&set);
  return sigprocmask(SIG_BLOCK, &set, NULL) == 0 ? 0 : -errno;
}

/* A signalfd that reads SIGCHLD (blocked already), or -errno. */
int open_child_events(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  return fd >= 0 ? fd : -errno;
}

