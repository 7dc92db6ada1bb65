/* hive-daemon-init: PID 1 above the daemon, where the daemon is a container's first process.
 *
 *   hive-daemon-init FD
 *
 * The kernel hands PID 1 every orphan of its PID namespace, and it must reap them or they stay
 * zombies; it also delivers PID 1 no signal it has no handler for. Node does neither for processes
 * it did not start (libuv reaps only its own children, and a wait for any child would take their
 * exits from it). So a daemon that finds itself PID 1 execs this with its own command line in the
 * file open at FD (its words, each ended by a NUL: in no command line, where a task's
 * `pkill -f node` would find it): this process forks, the child runs it (the daemon again, now PID
 * 2), and this one forwards to it
 * SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 and SIGWINCH, reaps whatever exits, and once
 * the daemon has exited exits as it did: its code, or 128 and the signal that ended it, as a shell
 * reports one. As tini and dumb-init do, minus what the daemon needs none of. */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "self-check.h"

#define MAX_WORDS 4096

static const int FORWARDED[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};

/* In the child: every signal unblocked again, then PROGRAM; 127 when it cannot be run, as a shell says. */
static void run_program(char **argv, const sigset_t *original) __attribute__((noreturn));
static void run_program(char **argv, const sigset_t *original) {
  sigprocmask(SIG_SETMASK, original, NULL);
  execvp(argv[0], argv);
  dprintf(2, "hive-daemon-init: exec %s: %s\n", argv[0], strerror(errno));
  _exit(errno == ENOENT ? 127 : 126);
}

/* Reaps every child that has exited; sets `*status` when one of them is `daemon`. Returns 1 then. */
static int reap_children(pid_t daemon, int *status) {
  int ended = 0, child_status;
  pid_t pid;
  while ((pid = waitpid(-1, &child_status, WNOHANG)) > 0) {
    if (pid != daemon) continue;
    *status = child_status;
    ended = 1;
  }
  return ended;
}

/* The command line in the file open at `fd` (words each ended by a NUL), as an argv; NULL on failure. */
static char **read_command(int fd) {
  static char text[1 << 20];
  static char *words[MAX_WORDS + 1];
  size_t used = 0;
  ssize_t got;
  while (used < sizeof text - 1 && (got = read(fd, text + used, sizeof text - 1 - used)) > 0) used += (size_t)got;
  close(fd);
  if (used == 0 || text[used - 1] != '\0') return NULL;
  size_t count = 0;
  for (char *word = text; word < text + used && count < MAX_WORDS; word += strlen(word) + 1) words[count++] = word;
  words[count] = NULL;
  return words;
}

int main(int argc, char **argv) {
  if (answered_version(argc, argv, "hive-daemon-init")) return 0;
  char **command = argc == 2 ? read_command(atoi(argv[1])) : NULL;
  if (command == NULL) {
    dprintf(2, "usage: hive-daemon-init FD (FD: a file holding the daemon's command line, each word ended by a NUL)\n");
    return 2;
  }
  sigset_t all, original;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, &original);
  pid_t daemon = fork();
  if (daemon < 0) {
    dprintf(2, "hive-daemon-init: fork: %s\n", strerror(errno));
    return 1;
  }
  if (daemon == 0) run_program(command, &original);
  for (;;) {
    siginfo_t info;
    int signal = sigwaitinfo(&all, &info);
    if (signal < 0) continue; /* EINTR */
    int status;
    /* What the daemon left in this PID namespace the kernel kills as this process exits. */
    if (signal == SIGCHLD && reap_children(daemon, &status)) return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
    for (size_t i = 0; i < sizeof FORWARDED / sizeof *FORWARDED; i++) {
      if (FORWARDED[i] == signal) kill(daemon, signal);
    }
  }
}
