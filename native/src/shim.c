/* hive-task-shim: the root of one task's process tree.
 *
 *   hive-task-shim [-t | -o BYTES] [-s FD] [-P FD] [-p FD] [-S] [-N] [-L] [-w DIR]... [-D FD] [-j DIR]... PARENT_PID CGROUP_DIR|- PROGRAM [ARG...]
 *
 * Its own executable (shim-main.c) runs this code, and so does a fork of the spawner asked for the
 * shim (shim-fork.c), which starts a task without exec'ing this image.
 *
 * fd 0-2 are the task's stdio; fd 3 reads control lines from the daemon ("kill N"); fd 4 gets
 * status lines for it: "start PID" once the leader has exec'd, then "exit CODE" or "signal N" at
 * its end, and "cpu USEC" (the CPU time of its whole reaped subtree) just before the shim exits; or, when a step before the exec fails, "error ERRNO CALL", ERRNO the positive errno in
 * decimal and CALL the failing call and its object (say "error 13 write DIR/cgroup.procs"). With
 * -o BYTES, fds 1 and 2 are the task's output files, open for writing: the leader gets a pipe for
 * each instead, and the shim copies what comes into the file (shim-output.c), keeping at most BYTES
 * of each stream (0: all); then "truncated STREAM cap|reserve|write ERRNO" says when a stream
 * (stdout, stderr) first drops a byte (the cap, the disk's reserve, a failed write), at any time,
 * and "output OUT_BYTES ERR_BYTES" (what the task wrote to each, kept or not) comes once both are
 * at EOF, before "cpu"; the leader's "exit" or "signal" comes once what it wrote is in the files,
 * and the shim exits only once its subtree is gone and both pipes are at EOF. With
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
 * to beneath them (and the devices a shell needs). -D FD is the detached devpts mount that holds
 * the terminal of a sandboxed task on one (-t): it becomes the task's /dev/pts. With -p FD, FD
 * holds the operator's command policy (exec-policy.h): every exec of the task but the leader's own
 * is matched against it, and its "policy-..." lines join the status lines. Usage errors and
 * failures after the start (nothing may follow "start" but the end, and truncations) are told on
 * stderr as "hive-task-shim: CALL: ..." (with -o, through the stderr stream: counted and capped
 * like the task's own).
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
 * (PR_SET_PDEATHSIG, checked after it is set). */
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
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "parse.h"
#include "sys.h"
#include "exec-policy.h"
#include "sandbox.h"
#include "shim.h"
#include "shim-output.h"
#include "tree.h"
#include "vfork-into.h"

#define CONTROL_FD 3
#define STATUS_FD 4
#define KILL_ROUNDS 100
#define LINE_MAX_BYTES (PATH_MAX + 128)
#define USAGE "usage: hive-task-shim [-t | -o BYTES] [-s FD] [-P FD] [-p FD] [-S] [-N] [-L] [-w DIR]... [-D FD] [-j DIR]... PARENT_PID CGROUP_DIR|- PROGRAM [ARG...]\n"
/* Where the leader finds the script fd given with -s. */
#define LEADER_SCRIPT_FD 3

/* Declares `call`, the failing call and its object, formatted from the function's own arguments. */
#define FORMAT_CALL(call, format)             \
  char call[LINE_MAX_BYTES - 16];             \
  va_list args;                               \
  va_start(args, format);                     \
  vsnprintf(call, sizeof call, format, args); \
  va_end(args)

static const char *cgroup_dir = NULL;
/* More cgroups the leader joins (cgroup v1 hierarchies that hold the task's resource limits). */
#define MAX_JOINED 4
static const char *joined_dirs[MAX_JOINED];
static int joined_count = 0;
static int on_terminal = 0;
/* The -s, -P, -D and -p fds, or -1. */
static int script_fd = -1;
static int host_proc_fd = -1;
static int devpts_fd = -1;
static int policy_fd = -1;
/* The command policy's seccomp listener, or -1 without a policy. */
static int policy_listener = -1;
/* The sandbox: -S, -N, -L and the -w folders. */
#define MAX_WRITE_DIRS 64
static int sandboxed = 0, isolated_network = 0, confined_writes = 0;
static const char *write_dirs[MAX_WRITE_DIRS];
static int write_count = 0;
/* With -o: the task's stdout and stderr, copied here into fds 1 and 2, at most `max_output` bytes
 * each; the pipes' write ends until the leader has its own. */
#define OUTPUT_BUDGET (4LL * 1024 * 1024)
static int copying_output = 0;
static long long max_output = 0;
static struct output_stream outputs[2];
static int leader_outputs[2] = {-1, -1};
static const char *const output_names[2] = {"stdout", "stderr"};

/* Writes one status line to STATUS_FD: 0 or -errno. */
static int report(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int report(const char *format, ...) {
  char line[LINE_MAX_BYTES];
  va_list args;
  va_start(args, format);
  int length = vsnprintf(line, sizeof line - 1, format, args);
  va_end(args);
  if (length < 0) return -EINVAL;
  if (length > (int)sizeof line - 2) length = sizeof line - 2;
  line[length++] = '\n';
  return write(STATUS_FD, line, (size_t)length) < 0 ? -errno : 0;
}

/* Reports why output stream `index` (0: stdout, 1: stderr) was cut. */
static void report_cut(int index) {
  const struct output_stream *stream = &outputs[index];
  if (stream->cut == OUTPUT_CUT_WRITE) report("truncated %s write %d", output_names[index], stream->cut_errno);
  else report("truncated %s %s", output_names[index], stream->cut == OUTPUT_CUT_CAP ? "cap" : "reserve");
}

/* Copies up to `budget` bytes of output stream `index` into its file. */
static void copy_output(int index, long long budget) {
  if (output_copy(&outputs[index], max_output, budget)) report_cut(index);
}

/* Reports "error ERRNO CALL"; on stderr instead when the status fd takes nothing. Returns 125. */
static int fail_setup(int err, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int fail_setup(int err, const char *format, ...) {
  FORMAT_CALL(call, format);
  if (report("error %d %s", err, call) < 0) dprintf(2, "hive-task-shim: %s: %s\n", call, strerror(err));
  return 125;
}

/* A bad command line: the call and the usage on stderr, and an error line. Returns 125. */
static int fail_usage(int err, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int fail_usage(int err, const char *format, ...) {
  FORMAT_CALL(call, format);
  dprintf(2, "hive-task-shim: %s: %s\n" USAGE, call, strerror(err));
  report("error %d %s", err, call);
  return 125;
}

/* Writes the shim's own text into the task's stderr: its file, counted and capped with the task's
 * output, where the shim writes it; else fd 2, the task's own stderr (or terminal). */
static void tell_task(const char *text, size_t length) {
  if (!copying_output || outputs[1].file != 2) { /* stderr is the task's, or its file not set up yet */
    while (length > 0) {
      ssize_t written = write(2, text, length);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) return;
      text += written;
      length -= (size_t)written;
    }
    return;
  }
  if (output_note(&outputs[1], max_output, text, length)) report_cut(1);
}

/* After the start only the leader's end may go to the status fd: later failures go to stderr. */
static void log_failure(int err, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void log_failure(int err, const char *format, ...) {
  FORMAT_CALL(call, format);
  char line[LINE_MAX_BYTES];
  int length = snprintf(line, sizeof line, "hive-task-shim: %s: %s\n", call, strerror(err));
  if (length >= (int)sizeof line) length = sizeof line - 1;
  if (length > 0) tell_task(line, (size_t)length);
}

/* Writes one whole status line to STATUS_FD (the policy's, which may be longer than report's). */
static void report_line(const char *line, size_t length) {
  while (length > 0) {
    ssize_t written = write(STATUS_FD, line, length);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return; /* the daemon is gone: nothing to do but carry on */
    line += written;
    length -= (size_t)written;
  }
}

static int set_close_on_exec(int fd) { return fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 ? 0 : -errno; }

static int register_subreaper(void) { return prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : -errno; }

/* SIGKILL when the parent (its thread, for a multithreaded one) dies. */
static int set_death_signal(void) { return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 ? 0 : -errno; }

/* The parent may have died before PR_SET_PDEATHSIG was set: then the parent is another process.
 * In the tasks' own PID namespace (-P) the shim's parent, the spawner, is outside and reads as 0;
 * once it is gone, the namespace's init is the parent, pid 1. */
static int check_parent(pid_t expected) {
  pid_t parent = getppid();
  return parent == expected || (parent == 0 && host_proc_fd >= 0) ? 0 : -ESRCH;
}

/* In the leader before exec: "ERRNO CALL" is written to `sync` as its reason, then the leader exits. */
static void fail_start(int sync, int err, const char *format, ...) __attribute__((format(printf, 3, 4), noreturn));
static void fail_start(int sync, int err, const char *format, ...) {
  FORMAT_CALL(call, format);
  if (dprintf(sync, "%d %s", err, call) < 0) dprintf(2, "hive-task-shim: %s: %s\n", call, strerror(err));
  _exit(125);
}

/* How the leader starts: its command line, the shim's pid, the exec pipe's two ends, and whether
 * it was created in CGROUP_DIR already (else it joins it by writing cgroup.procs). */
struct leader_start {
  char **argv;
  pid_t shim;
  int sync[2];
  int in_cgroup;
};

/* In the leader, after it joined its cgroups: the sandbox's steps in sandbox.h's order. */
static void enter_sandbox(int sync) {
  const char *call, *object;
  int dir_fds[MAX_WRITE_DIRS];
  int err;
  if (isolated_network && (err = isolate_network(&call)) < 0) fail_start(sync, -err, "%s", call);
  if ((err = confine_mounts(write_dirs, write_count, confined_writes, devpts_fd, dir_fds, &call, &object)) < 0)
    fail_start(sync, -err, "%s %s", call, object);
  if ((err = drop_capabilities(&call)) < 0 || (err = set_no_new_privs(&call)) < 0) fail_start(sync, -err, "%s", call);
  if (confined_writes && (err = confine_writes(dir_fds, write_dirs, write_count, &call, &object)) < 0) fail_start(sync, -err, "%s %s", call, object);
  for (int i = 0; confined_writes && i < write_count; i++) close(dir_fds[i]);
  if ((err = block_terminal_injection(&call)) < 0) fail_start(sync, -err, "%s", call);
}

static void exec_leader(const struct leader_start *start) __attribute__((noreturn));
static void exec_leader(const struct leader_start *start) {
  char **argv = start->argv;
  int sync = start->sync[1];
  int err;
  const char *call;
  /* dup2 onto another number clears close-on-exec: the leader keeps these. */
  for (int i = 0; copying_output && i < 2; i++) {
    if (dup2(leader_outputs[i], i + 1) < 0) fail_start(sync, errno, "dup2 fd %d to %d (the %s pipe)", leader_outputs[i], i + 1, output_names[i]);
  }
  if (setpgid(0, 0) != 0) fail_start(sync, errno, "setpgid 0 0");
  /* Signals are still blocked here, so tcsetpgrp from what is yet a background group is not stopped by SIGTTOU. */
  if (on_terminal && tcsetpgrp(0, getpid()) != 0) fail_start(sync, errno, "tcsetpgrp fd 0");
  if ((err = set_death_signal()) < 0) fail_start(sync, -err, "prctl PR_SET_PDEATHSIG");
  if ((err = check_parent(start->shim)) < 0) fail_start(sync, -err, "getppid: the shim is gone");
  /* dup2 onto another number clears close-on-exec: the leader keeps this one. */
  if (script_fd >= 0 && dup2(script_fd, LEADER_SCRIPT_FD) < 0) fail_start(sync, errno, "dup2 fd %d to %d (the script)", script_fd, LEADER_SCRIPT_FD);
  if (cgroup_dir != NULL && !start->in_cgroup && (err = join_cgroup(cgroup_dir, &call)) < 0) fail_start(sync, -err, "%s %s/cgroup.procs", call, cgroup_dir);
  for (int i = 0; i < joined_count; i++) {
    if ((err = join_cgroup(joined_dirs[i], &call)) < 0) fail_start(sync, -err, "%s %s/cgroup.procs", call, joined_dirs[i]);
  }
  if (sandboxed) enter_sandbox(sync);
  sigset_t none;
  sigemptyset(&none);
  if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) fail_start(sync, errno, "sigprocmask SIG_SETMASK none");
  execvp(argv[0], argv); /* on success, exec closes `sync` (close-on-exec): the parent sees EOF */
  err = errno;
  dprintf(2, "hive-task-shim: %s: %s\n", argv[0], strerror(err));
  _exit(err == ENOENT ? 127 : 126);
}

static int leader_main(void *start) {
  close(((const struct leader_start *)start)->sync[0]);
  exec_leader(start);
}

/* The leader's stack until its exec, where it is not the shim's (vfork-into.h): its own steps need
 * a few KiB, and execvp, for a file with no #! line, copies argv onto it to run it with /bin/sh
 * (glibc's posix_spawn sizes its child's stack by argv the same way). */
static size_t leader_stack_bytes(char **argv) {
  size_t argc = 0;
  while (argv[argc] != NULL) argc++;
  return 256 * 1024 + (argc + 2) * sizeof(char *);
}

/* The shim waits for the leader's exec anyway: vfork spares it a copy of the shim's memory. The
 * child shares that memory until it execs, so it runs only in leader_main and exec_leader, never
 * returns into the caller's frame, and no handler can run in it (every signal is blocked). Under a
 * command policy the shim must answer the leader's exec (which waits in the kernel for it), so the
 * leader is forked instead: a vforked one would wait for a shim that waits for it. Where it can,
 * the leader is created in CGROUP_DIR (vfork-into.h: a write to cgroup.procs may wait out an RCU
 * grace period); else, or if that fails, it is vforked (forked) and writes cgroup.procs itself,
 * which reports the cgroup's fault if there is one. Returns its pid, or -1 with errno. */
static __attribute__((noinline)) pid_t start_leader(char **argv, const int sync[2]) {
  struct leader_start start = {.argv = argv, .shim = getpid(), .sync = {sync[0], sync[1]}, .in_cgroup = 0};
  int forked = policy_listener >= 0;
  int cgroup_fd = cgroup_dir == NULL ? -1 : open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgroup_fd >= 0) {
    start.in_cgroup = 1;
    pid_t leader = forked ? fork_into_cgroup(cgroup_fd, leader_stack_bytes(argv), leader_main, &start)
                          : vfork_into_cgroup(cgroup_fd, leader_stack_bytes(argv), leader_main, &start);
    close(cgroup_fd);
    if (leader > 0) return leader;
    start.in_cgroup = 0;
  }
  pid_t leader = forked ? fork() : vfork();
  if (leader == 0) leader_main(&start);
  return leader;
}

/* Under a command policy, waits until `sync` can be read, answering execs meanwhile: the leader's
 * own go on unmatched until then (its exec of the task's shell, each of execvp's tries along PATH).
 * Once the shell runs, `sync` is at its end before the shell can exec anything: a shell's exec is
 * never taken for the leader's. */
static void serve_until_readable(int sync, pid_t leader) {
  struct pollfd fds[2] = {{.fd = sync, .events = POLLIN}, {.fd = policy_listener, .events = POLLIN}};
  while (policy_listener >= 0) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    if (fds[1].revents & POLLIN) exec_policy_serve(leader);
  }
}

/* Waits until the leader has exec'd (EOF on `sync`: 0) or failed (its reason on `sync`: 1); -errno
 * if `sync` cannot be read. */
static int await_exec(int sync, char *reason, size_t size, pid_t leader) {
  size_t used = 0;
  int err = 0;
  for (;;) {
    serve_until_readable(sync, leader);
    ssize_t got = read(sync, reason + used, size - used - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) err = -errno;
    if (got <= 0) break;
    used += (size_t)got;
    if (used == size - 1) break;
  }
  reason[used] = '\0';
  close(sync);
  return err < 0 ? err : used > 0;
}

/* Reports "start PID", or "start PID HOST_PID" with -P. The leader is unreaped until the shim's
 * loop runs, so the outer /proc still shows it as this shim's child. */
static void report_start(pid_t leader) {
  const char *call;
  pid_t outer = host_proc_fd < 0 ? 0 : outer_pid_of_child(host_proc_fd, leader, &call);
  if (outer < 0) log_failure(-outer, "%s", call);
  if (outer > 0) report("start %d %d", leader, outer);
  else report("start %d", leader);
  if (host_proc_fd >= 0) close(host_proc_fd);
}

/* The leader has exited with `status`: what it wrote goes into the files, then its end is told. */
static void leader_exited(int status, int *leader_done) {
  *leader_done = 1;
  /* What the leader wrote is all in the pipes now: it goes into the files (or is dropped) before
   * its end is told. */
  for (int i = 0; copying_output && i < 2; i++) copy_output(i, output_pending(&outputs[i]));
  /* The daemon may be gone (EPIPE, with SIGPIPE blocked): nothing to do but carry on. */
  if (WIFSIGNALED(status)) report("signal %d", WTERMSIG(status));
  else report("exit %d", WEXITSTATUS(status));
}

/* Reaps every exited child; reports the leader's end. Returns 1 once no child is left. */
static int reap_children(pid_t leader, int *leader_done) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == 0) return 0;
    if (pid < 0) return errno == ECHILD ? 1 : 0;
    if (pid == leader) leader_exited(status, leader_done);
  }
}

/* Reaps the leader alone if it has exited: a wait for one pid does not walk the other children. */
static void reap_leader(pid_t leader, int *leader_done) {
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

/* Starts watching the killed cgroup empty; without its cgroup.events, children are reaped as usual. */
static void watch_cgroup_empty(void) {
  if (emptying_fd >= 0) return;
  const char *call;
  int fd = open_cgroup_events(cgroup_dir, &call);
  if (fd < 0) log_failure(-fd, "%s %s/cgroup.events", call, cgroup_dir);
  else emptying_fd = fd;
}

/* Whether the killed cgroup is still emptying; once it is empty (or unreadable) the watch ends. */
static int cgroup_emptying(void) {
  if (emptying_fd < 0) return 0;
  if (cgroup_populated(emptying_fd) == 1) return 1;
  close(emptying_fd);
  emptying_fd = -1;
  return 0;
}

static void kill_tree(int sig, pid_t leader, int *leader_done) {
  const char *call = NULL;
  int result;
  if (cgroup_dir != NULL) {
    if (sig == SIGKILL && (result = kill_cgroup(cgroup_dir, &call)) < 0) log_failure(-result, "%s %s/cgroup.kill", call, cgroup_dir);
    if (sig == SIGKILL && result == 0) watch_cgroup_empty();
    if (sig != SIGKILL && (result = signal_cgroup(cgroup_dir, sig, &call)) < 0) log_failure(-result, "%s (signal %d to cgroup %s)", call, sig, cgroup_dir);
    return;
  }
  if (sig != SIGKILL) {
    if ((result = signal_descendants(getpid(), sig, &call)) < 0) log_failure(-result, "%s (signal %d to the shim's descendants)", call, sig);
    return;
  }
  /* The leader's process group first, in one call: it holds the task's `&` jobs (bash -c has no
   * job control), so most of the task is dying before the walk reads /proc. Only while the leader
   * is unreaped: until then no other process can take its pid, so the group of that id is the task's. */
  if (!*leader_done && kill(-leader, SIGKILL) != 0 && errno != ESRCH) log_failure(errno, "kill -%d SIGKILL (the leader's process group)", leader);
  /* What left the group (setsid, setpgid) is found by descent; a forking process can outrun one
   * pass, so repeat until nothing is left. */
  for (int round = 0; round < KILL_ROUNDS && (result = signal_descendants(getpid(), SIGKILL, &call)) > 0; round++) {
    reap_children(leader, leader_done);
    usleep(1000);
  }
  if (result < 0) log_failure(-result, "%s (signal %d to the shim's descendants)", call, SIGKILL);
}

/* Applies each complete "kill N" line read from the control fd; returns 0 at EOF. A line that
 * fills the buffer without its end is dropped, with a message, up to its newline: the shim goes on
 * taking kills after it. */
static int read_control(char *buffer, size_t *used, size_t size, pid_t leader, int *leader_done) {
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
    else if (policy_listener < 0 || (err = exec_policy_control(line)) <= 0) log_failure(err < 0 ? -err : EINVAL, "parse control line '%.64s'", line);
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
  return sigprocmask(SIG_BLOCK, &set, NULL) == 0 ? 0 : -errno;
}

/* A signalfd that reads SIGCHLD (blocked already), or -errno. */
static int open_child_events(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  return fd >= 0 ? fd : -errno;
}

/* The CPU time of every child reaped here: with the shim as subreaper, the task's whole subtree. */
static void report_subtree_cpu(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_CHILDREN, &usage) != 0) {
    log_failure(errno, "getrusage RUSAGE_CHILDREN");
    return;
  }
  long long usec = (long long)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
  report("cpu %lld", usec);
}

static int supervise(pid_t leader, int child_events) {
  struct pollfd fds[6] = {{.fd = child_events, .events = POLLIN},
                          {.fd = CONTROL_FD, .events = POLLIN},
                          {.fd = -1, .events = POLLIN},
                          {.fd = -1, .events = POLLIN},
                          {.fd = -1, .events = POLLPRI},
                          {.fd = policy_listener, .events = POLLIN}};
  char control[256];
  size_t used = 0;
  int leader_done = 0, err;
  for (;;) {
    int emptying = cgroup_emptying();
    if (emptying) reap_leader(leader, &leader_done);
    else if (reap_children(leader, &leader_done) && leader_done && (!copying_output || (outputs[0].pipe < 0 && outputs[1].pipe < 0))) {
      if (copying_output) report("output %lld %lld", outputs[0].produced, outputs[1].produced);
      report_subtree_cpu();
      return 0;
    }
    /* While the cgroup empties, its change wakes the loop; SIGCHLD only until the leader is reaped. */
    fds[0].fd = emptying && leader_done ? -1 : child_events;
    fds[4].fd = emptying ? emptying_fd : -1;
    for (int i = 0; copying_output && i < 2; i++) fds[2 + i].fd = outputs[i].pipe;
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
    if (policy_listener >= 0) exec_policy_sweep();
  }
}

/* With -p: the command policy's filter on the shim itself, before the leader inherits it. */
static int start_policy(const char **call) {
  if (policy_fd < 0) return 0;
  static const struct exec_policy_io io = {.report = report_line, .tell_task = tell_task};
  int listener = exec_policy_start(policy_fd, &io, call);
  close(policy_fd);
  if (listener < 0) return listener;
  policy_listener = listener;
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

/* The single-letter switches: -t, -S, -N, -L. */
static int is_switch(const char *arg) { return arg[0] == '-' && arg[1] != '\0' && strchr("tSNL", arg[1]) != NULL && arg[2] == '\0'; }

/* The options that give an fd: -s, -P, -D, -p. */
static int is_fd_option(const char *arg) { return arg[0] == '-' && arg[1] != '\0' && strchr("sPDp", arg[1]) != NULL && arg[2] == '\0'; }

static int *fd_option_of(char letter) {
  return letter == 's' ? &script_fd : letter == 'P' ? &host_proc_fd : letter == 'D' ? &devpts_fd : &policy_fd;
}

static int *switch_of(char letter) {
  return letter == 't' ? &on_terminal : letter == 'S' ? &sandboxed : letter == 'N' ? &isolated_network : &confined_writes;
}

int run_shim(int argc, char **argv) {
  for (;;) {
    if (argc > 1 && is_switch(argv[1])) {
      *switch_of(argv[1][1]) = 1;
      argv++;
      argc--;
    } else if (argc > 2 && strcmp(argv[1], "-w") == 0) {
      if (write_count == MAX_WRITE_DIRS) return fail_usage(E2BIG, "argv: more than %d -w folders", MAX_WRITE_DIRS);
      write_dirs[write_count++] = argv[2];
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
      copying_output = 1;
      max_output = bytes;
      argv += 2;
      argc -= 2;
    } else if (argc > 2 && strcmp(argv[1], "-j") == 0) {
      if (joined_count == MAX_JOINED) return fail_usage(E2BIG, "argv: more than %d -j cgroups", MAX_JOINED);
      joined_dirs[joined_count++] = argv[2];
      argv += 2;
      argc -= 2;
    } else {
      break;
    }
  }
  if (argc < 4) return fail_usage(EINVAL, "argv: %d arguments where at least 3 are needed", argc - 1);
  sandboxed |= isolated_network | confined_writes;
  long parent;
  int err = parse_decimal(argv[1], 1, INT_MAX, &parent);
  if (err < 0) return fail_usage(-err, "strtol PARENT_PID '%.64s' (a pid, from 1)", argv[1]);
  if (strcmp(argv[2], "-") != 0) cgroup_dir = argv[2];
  int own_fds[] = {CONTROL_FD, STATUS_FD, script_fd, host_proc_fd, devpts_fd, policy_fd};
  for (size_t i = 0; i < sizeof own_fds / sizeof *own_fds; i++) {
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
  if ((err = set_death_signal()) < 0) return fail_setup(-err, "prctl PR_SET_PDEATHSIG");
  if ((err = check_parent((pid_t)parent)) < 0) return fail_setup(-err, "getppid: the spawner is gone");
  const char *call;
  if (on_terminal && (err = take_terminal(&call)) < 0) return fail_setup(-err, "%s", call);
  for (int i = 0; copying_output && i < 2; i++) {
    if ((err = output_open(&outputs[i], i + 1, &leader_outputs[i])) < 0) return fail_setup(-err, "pipe2 (%s)", output_names[i]);
  }
  if ((err = start_policy(&call)) < 0) return fail_setup(-err, "%s", call);
  int sync[2];
  if (pipe2(sync, O_CLOEXEC) != 0) return fail_setup(errno, "pipe2");
  pid_t leader = start_leader(argv + 3, sync);
  if (leader < 0) return fail_setup(errno, "vfork");
  close(sync[1]);
  for (int i = 0; copying_output && i < 2; i++) close(leader_outputs[i]); /* EOF comes once the task's own copies are gone */
  if (script_fd >= 0) close(script_fd); /* the leader has its own copy, or failed */
  if (devpts_fd >= 0) close(devpts_fd); /* attached in the leader's mount namespace, or failed */
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
