/* hive-task-spawner: starts task shims on behalf of a daemon thread.
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
 * It reaps the shims it starts, and dies with the thread that started it (PR_SET_PDEATHSIG), which
 * takes the shims with it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdpass.h"
#include "spawn.h"

#define SOCKET_FD 3
#define ANSWER_FD 4
#define MAX_STRINGS 65536

/* Splits the request's NUL-separated fields; returns 0 or -EINVAL. argv and envp point into data. */
static int parse_request(char *data, long length, char **cwd, char **path, char **argv, char **envp) {
  char *cursor = data, *end = data + length;
  char *fields[3];
  for (int i = 0; i < 3; i++) {
    if (cursor >= end) return -EINVAL;
    fields[i] = cursor;
    cursor += strlen(cursor) + 1;
  }
  *cwd = fields[0];
  *path = fields[1];
  long argc = strtol(fields[2], NULL, 10);
  if (argc < 1 || argc >= MAX_STRINGS) return -EINVAL;
  int count = 0;
  for (; cursor < end && count < argc; count++, cursor += strlen(cursor) + 1) argv[count] = cursor;
  if (count != argc) return -EINVAL;
  argv[count] = NULL;
  count = 0;
  for (; cursor < end && count < MAX_STRINGS - 1; count++, cursor += strlen(cursor) + 1) envp[count] = cursor;
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
    if (grown == NULL) exit(1); /* the thread sees the spawner gone and starts another */
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
    if (sent < 0) exit(0);
    memmove(unsent, unsent + sent, unsent_length - (size_t)sent);
    unsent_length -= (size_t)sent;
  }
}

static void serve_request(char *data, long length, int *fds, int nfds) {
  static char *argv[MAX_STRINGS], *envp[MAX_STRINGS];
  char *cwd, *path;
  pid_t pid = 0;
  int pidfd = -1;
  int err = parse_request(data, length, &cwd, &path, argv, envp);
  if (err == 0) err = spawn_session_leader(path, argv, envp, cwd, fds, nfds, &pid, &pidfd);
  if (pidfd >= 0) close(pidfd); /* this process reaps its children with waitpid */
  for (int i = 0; i < nfds; i++) close(fds[i]);
  char answer[64];
  int size = snprintf(answer, sizeof answer, "%d %d", err, (int)pid);
  queue_answer(answer, (size_t)size);
  flush_answers();
}

static void reap_children(void) {
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  pid_t parent = getppid();
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) return 1;
  fcntl(SOCKET_FD, F_SETFD, FD_CLOEXEC);
  fcntl(ANSWER_FD, F_SETFD, FD_CLOEXEC);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGPIPE);
  sigprocmask(SIG_BLOCK, &set, NULL);
  sigdelset(&set, SIGPIPE);
  int child_events = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (child_events < 0) return 1;
  struct pollfd fds[3] = {{.fd = SOCKET_FD, .events = POLLIN}, {.fd = child_events, .events = POLLIN}, {.fd = ANSWER_FD, .events = POLLOUT}};
  for (;;) {
    /* Waits for the answer socket to take more only while answers are queued. */
    if (poll(fds, unsent_length > 0 ? 3 : 2, -1) < 0 && errno != EINTR) return 1;
    if (unsent_length > 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) flush_answers();
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo info;
      while (read(child_events, &info, sizeof info) > 0) {
      }
      reap_children();
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      char *data = NULL;
      int passed[FDPASS_MAX_FDS], npassed = 0;
      long length = receive_frame(SOCKET_FD, &data, passed, &npassed);
      if (length <= 0) return 0; /* the daemon thread closed its end, or the stream broke */
      serve_request(data, length, passed, npassed);
      free(data);
    }
  }
}
