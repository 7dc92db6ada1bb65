/* hive-task-spawner: starts task shims on behalf of a daemon thread.
 *
 *   hive-task-spawner [SHIM_PATH [INIT_PIDFD]]
 *
 * posix_spawn (clone with CLONE_VM|CLONE_VFORK) still costs more the larger the calling process is
 * (measured here: about 1,200 spawns/s from a small Node process, 700/s with 1 GiB more). This
 * process stays small whatever the daemon grows to, so spawning through it costs the same at any
 * daemon size. fd 3 is a unix stream socket from the daemon thread: each request frame carries
 * "cwd\0path\0argc\0argv...\0env...\0" and the child's stdio fds. The answers, "ERRNO PID" one
 * frame each in the order of the requests, go to fd 4, a socket of their own that the thread reads
 * from its event loop (so it never waits for a spawn). Answers are queued here and written without
 * blocking: a thread that sends many requests in one turn of its loop blocks on its request
 * socket until they are read, and this process must go on reading them rather than wait for the
 * thread to read answers.
 * A request whose path is SHIM_PATH is served by a fork of this process that runs the shim's code,
 * linked in here, instead of exec'ing it (shim-fork.c): the same shim, without the cost of loading
 * its image. Any other path is posix_spawned.
 * With INIT_PIDFD, an fd of this process that is a pidfd of hive-task-init's init, it joins that
 * init's PID, mount and user namespaces (setns), so that everything it starts runs in the tasks' own
 * namespaces; it stays outside itself, unseen there. Should that init die (every process inside
 * dies with it), this process exits, and the thread starts a new one for a new namespace.
 * It reaps the shims it starts, and dies with the thread that started it (PR_SET_PDEATHSIG), which
 * takes the shims with it. Whatever ends it, and every malformed request (answered EINVAL), is told
 * in one line on stderr, "hive-task-spawner: CALL: REASON". */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdpass.h"
#include "parse.h"
#include "sys.h"
#include "shim-fork.h"
#include "spawn.h"
#include "self-check.h"

#define SOCKET_FD 3
#define ANSWER_FD 4
#define MAX_STRINGS 65536
/* The kernel's signal count (_NSIG), whose sigset it wants the size of. */
#define KERNEL_SIGNALS 64

/* Writes "hive-task-spawner: CALL: strerror(err)" to stderr; returns -err. */
static int log_failure(int err, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int log_failure(int err, const char *format, ...) {
  char call[256];
  va_list args;
  va_start(args, format);
  vsnprintf(call, sizeof call, format, args);
  va_end(args);
  dprintf(2, "hive-task-spawner: %s: %s\n", call, strerror(err));
  return -err;
}

/* The thread sees the spawner gone and starts another. */
#define exit_with_error(status, ...) \
  do {                               \
    log_failure(__VA_ARGS__);               \
    exit(status);                    \
  } while (0)

/* Splits the request's NUL-separated fields; returns 0 or -EINVAL (told on stderr). argv and envp
 * point into data. */
static int parse_request(char *data, long length, char **cwd, char **path, char **argv, char **envp) {
  char *cursor = data, *end = data + length;
  char *fields[3];
  for (int i = 0; i < 3; i++) {
    if (cursor >= end) return log_failure(EINVAL, "parse request: %d of its 3 fields cwd, path, argc", i);
    fields[i] = cursor;
    cursor += strlen(cursor) + 1;
  }
  *cwd = fields[0];
  *path = fields[1];
  long argc;
  int err = parse_decimal(fields[2], 1, MAX_STRINGS - 1, &argc);
  if (err < 0) return log_failure(EINVAL, "parse request: argc '%.32s' (a count from 1 to %d)", fields[2], MAX_STRINGS - 1);
  int count = 0;
  for (; cursor < end && count < argc; count++, cursor += strlen(cursor) + 1) argv[count] = cursor;
  if (count != argc) return log_failure(EINVAL, "parse request: %d argv strings where argc is %ld", count, argc);
  argv[count] = NULL;
  count = 0;
  for (; cursor < end && count < MAX_STRINGS - 1; count++, cursor += strlen(cursor) + 1) envp[count] = cursor;
  if (cursor < end) return log_failure(EINVAL, "parse request: more than %d env strings", MAX_STRINGS - 1);
  envp[count] = NULL;
  return 0;
}

/* Answer frames not yet written to ANSWER_FD. */
static char *unsent = NULL;
static size_t unsent_length = 0, unsent_capacity = 0;

/* Queues one answer frame (a 32-bit length in this machine's order, then the text). */
static void queue_answer(const char *text, size_t length) {
  if (unsent_length + sizeof(uint32_t) + length > unsent_capacity) {
    size_t capacity = unsent_capacity == 0 ? 4096 : unsent_capacity * 2;
    while (capacity < unsent_length + sizeof(uint32_t) + length) capacity *= 2;
    char *grown = realloc(unsent, capacity);
    if (grown == NULL) exit_with_error(1, ENOMEM, "realloc the answer queue to %zu bytes", capacity);
    unsent = grown;
    unsent_capacity = capacity;
  }
  uint32_t header = (uint32_t)length;
  memcpy(unsent + unsent_length, &header, sizeof header);
  memcpy(unsent + unsent_length + sizeof header, text, length);
  unsent_length += sizeof header + length;
}

/* Writes what the answer socket takes now; exits if the thread is gone. */
static void flush_answers(void) {
  while (unsent_length > 0) {
    ssize_t sent = send(ANSWER_FD, unsent, unsent_length, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (sent < 0) exit_with_error(1, errno, "send answers on fd %d", ANSWER_FD);
    memmove(unsent, unsent + sent, unsent_length - (size_t)sent);
    unsent_length -= (size_t)sent;
  }
}

/* The shim executable whose requests a fork of this process serves, or NULL. */
static const char *builtin_shim = NULL;

static void serve_request(char *data, long length, int *fds, int nfds) {
  static char *argv[MAX_STRINGS], *envp[MAX_STRINGS];
  char *cwd = NULL, *path = NULL;
  pid_t pid = 0;
  int pidfd = -1;
  int err = parse_request(data, length, &cwd, &path, argv, envp);
  if (err == 0 && builtin_shim != NULL && strcmp(path, builtin_shim) == 0) err = fork_shim(argv, envp, cwd, fds, nfds, &pid);
  else if (err == 0) err = spawn_session_leader(path, argv, envp, cwd, fds, nfds, &pid, &pidfd);
  if (pidfd >= 0) close(pidfd); /* this process reaps its children with waitpid */
  for (int i = 0; i < nfds; i++) close(fds[i]);
  char answer[64];
  int size = snprintf(answer, sizeof answer, "%d %d", err, (int)pid);
  queue_answer(answer, (size_t)size);
  flush_answers();
}

/* The pidfd of the tasks' init whose namespaces this process joined, or -1. */
static int init_pidfd = -1;

/* Reaps the children that exited, and continues at once any that was stopped: a shim stopped (a
 * task may SIGSTOP its own shim, or another task's, which share its namespace) would take no kill
 * and tell no end. The daemon's SIGCONT with each kill reaches one stopped while this process is. */
static void reap_children(void) {
  for (;;) {
    siginfo_t info = {0};
    if (waitid(P_ALL, 0, &info, WEXITED | WSTOPPED | WNOHANG) != 0 || info.si_pid == 0) return;
    if (info.si_code == CLD_STOPPED) kill(info.si_pid, SIGCONT);
  }
}

/* Every signal at its default, glibc's own two (SIGCANCEL and SIGSETXID, 32 and 33) too: glibc's
 * posix_spawn leaves those ignored in a child of a threaded process (Node, which starts this one),
 * the ignoring survives exec, and every shim and task started from here would inherit it. glibc's
 * sigaction refuses them, hence the system call; an all-zero action is SIG_DFL with no flags and
 * an empty mask in every architecture's layout. */
static void reset_signal_dispositions(void) {
  unsigned long default_action[8] = {0};
  for (int sig = 1; sig <= KERNEL_SIGNALS; sig++) {
    if (sig != SIGKILL && sig != SIGSTOP) syscall(SYS_rt_sigaction, sig, default_action, NULL, KERNEL_SIGNALS / 8);
  }
}

/* An fd of the user namespace that owns the PID namespace of the init behind `pidfd` (its pid read
 * from the pidfd's fdinfo), or -errno. */
static int open_pid_namespace_owner(int pidfd) {
  char path[64], info[512];
  snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  int err = read_small_file(AT_FDCWD, path, info, sizeof info);
  if (err < 0) return err;
  const char *line = strstr(info, "\nPid:");
  long pid = line == NULL ? -1 : strtol(line + 5, NULL, 10);
  if (pid <= 0) return -ESRCH;
  snprintf(path, sizeof path, "/proc/%ld/ns/pid", pid);
  int namespace = open(path, O_RDONLY | O_CLOEXEC);
  if (namespace < 0) return -errno;
  int owner = ioctl(namespace, NS_GET_USERNS);
  err = owner < 0 ? -errno : owner;
  close(namespace);
  return err;
}

/* Joins the namespaces of the init behind `pidfd`: first the user namespace that owns its PID
 * namespace (one made for it where the daemon may not make namespaces itself; the daemon's own
 * as root), in which this process may then join its PID (for its children), mount and IPC namespaces,
 * then its own user namespace, which owns that mount namespace. Joining the user namespace this
 * process is in already fails with EINVAL, and is skipped. */
static void join_task_namespace(const char *text) {
  long pidfd;
  if (parse_decimal(text, ANSWER_FD + 1, 1024, &pidfd) < 0) exit_with_error(1, EINVAL, "parse INIT_PIDFD '%.32s'", text);
  struct pollfd init = {.fd = (int)pidfd, .events = POLLIN};
  if (poll(&init, 1, 0) != 0) exit_with_error(1, ESRCH, "poll INIT_PIDFD %ld: the tasks' init is gone", pidfd);
  int owner = open_pid_namespace_owner((int)pidfd);
  if (owner < 0) exit_with_error(1, -owner, "ioctl NS_GET_USERNS of INIT_PIDFD %ld's PID namespace", pidfd);
  if (setns(owner, CLONE_NEWUSER) != 0 && errno != EINVAL) exit_with_error(1, errno, "setns the owner of INIT_PIDFD %ld's PID namespace", pidfd);
  close(owner);
  if (setns((int)pidfd, CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC) != 0) exit_with_error(1, errno, "setns INIT_PIDFD %ld CLONE_NEWPID|CLONE_NEWNS|CLONE_NEWIPC", pidfd);
  if (setns((int)pidfd, CLONE_NEWUSER) != 0 && errno != EINVAL) exit_with_error(1, errno, "setns INIT_PIDFD %ld CLONE_NEWUSER", pidfd);
  if (fcntl((int)pidfd, F_SETFD, FD_CLOEXEC) != 0) exit_with_error(1, errno, "fcntl F_SETFD FD_CLOEXEC fd %ld", pidfd);
  init_pidfd = (int)pidfd;
}

int main(int argc, char **argv) {
  if (answered_version(argc, argv, "hive-task-spawner")) return 0;
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) exit_with_error(1, errno, "prctl PR_SET_PDEATHSIG");
  if (getppid() != parent) exit_with_error(1, ESRCH, "getppid: the daemon is gone");
  /* No task may trace this process, nor read or write its memory in /proc. */
  if (prctl(PR_SET_DUMPABLE, 0) != 0) exit_with_error(1, errno, "prctl PR_SET_DUMPABLE 0");
  for (int fd = SOCKET_FD; fd <= ANSWER_FD; fd++) {
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) exit_with_error(1, errno, "fcntl F_SETFD FD_CLOEXEC fd %d", fd);
  }
  if (argc > 1) {
    builtin_shim = argv[1];
    int err = load_memory_layout();
    if (err < 0) log_failure(-err, "read /proc/self/stat (forked shims show the spawner's command line)");
  }
  /* After the read of /proc/self: the joined namespace's /proc does not show this process. */
  if (argc > 2) join_task_namespace(argv[2]);
  reset_signal_dispositions();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGPIPE);
  if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) exit_with_error(1, errno, "sigprocmask SIG_BLOCK SIGCHLD SIGPIPE");
  sigdelset(&set, SIGPIPE);
  int child_events = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (child_events < 0) exit_with_error(1, errno, "signalfd SIGCHLD");
  /* fds[2] only with an init (poll skips a negative fd); fds[3] only while answers are queued. */
  struct pollfd fds[4] = {{.fd = SOCKET_FD, .events = POLLIN}, {.fd = child_events, .events = POLLIN}, {.fd = init_pidfd, .events = POLLIN}, {.fd = ANSWER_FD, .events = POLLOUT}};
  for (;;) {
    if (poll(fds, unsent_length > 0 ? 4 : 3, -1) < 0 && errno != EINTR) exit_with_error(1, errno, "poll");
    if (fds[2].revents & POLLIN) exit_with_error(1, ESRCH, "poll INIT_PIDFD: the tasks' init died, and every task in its namespace with it");
    if (unsent_length > 0 && (fds[3].revents & (POLLOUT | POLLERR | POLLHUP))) flush_answers();
    if (fds[1].revents & POLLIN) {
      int err = drain_signalfd(child_events);
      if (err < 0) exit_with_error(1, -err, "read signalfd SIGCHLD");
      reap_children();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char *data = NULL;
      int passed[FDPASS_MAX_FDS], npassed = 0;
      long length = receive_frame(SOCKET_FD, &data, passed, &npassed);
      /* A broken frame leaves the stream out of step: no later request could be read either. */
      if (length < 0) exit_with_error(1, (int)-length, "receive a request on fd %d", SOCKET_FD);
      if (length == 0) {
        dprintf(2, "hive-task-spawner: recvmsg fd %d: end of file (the daemon thread closed its end)\n", SOCKET_FD);
        return 0;
      }
      serve_request(data, length, passed, npassed);
      free(data);
    }
  }
}
