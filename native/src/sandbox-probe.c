/* See sandbox-probe.h. */
#define _GNU_SOURCE
#include "sandbox-probe.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"

/* In the probe's child: the leader's steps with network, read-only mounts and confined writes,
 * none of the task's own; exits 0, or 1 with "ERRNO CALL OBJECT" on `report`. */
static void set_up_sandbox(int report) __attribute__((noreturn));
static void set_up_sandbox(int report) {
  const char *call = "", *object = "";
  int dir_fds[1];
  int err = isolate_network(&call);
  if (err == 0) err = confine_mounts(NULL, 0, 1, -1, dir_fds, &call, &object);
  if (err == 0) object = "";
  if (err == 0) err = drop_capabilities(&call);
  if (err == 0) err = set_no_new_privs(&call);
  if (err == 0) err = confine_writes(dir_fds, NULL, 0, &call, &object);
  if (err == 0) err = filter_system_calls(&call);
  if (err == 0) _exit(0);
  dprintf(report, "%d %s%s%s", -err, call, object[0] != '\0' ? " " : "", object);
  _exit(1);
}

int probe_sandbox(char *reason, size_t size) {
  reason[0] = '\0';
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return snprintf(reason, size, "%d pipe2", errno), -1;
  pid_t child = fork();
  if (child < 0) {
    snprintf(reason, size, "%d fork", errno);
    close(report[0]);
    close(report[1]);
    return -1;
  }
  if (child == 0) {
    close(report[0]);
    set_up_sandbox(report[1]);
  }
  close(report[1]);
  ssize_t got = read(report[0], reason, size - 1);
  reason[got > 0 ? got : 0] = '\0';
  close(report[0]);
  int status;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (reason[0] == '\0') snprintf(reason, size, "%d the probe's child ended by signal %d", ECHILD, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}
