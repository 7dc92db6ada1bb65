/* The shim's leader: started in the task's cgroup (vforked, or forked under a command policy),
 * given its stdio, process group, terminal, script fd, cgroups and sandbox, then exec'd; the shim
 * waits for the exec on a close-on-exec pipe, which carries the reason when a step fails. */
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
#include <sys/wait.h>
#include <unistd.h>

#include "exec-policy.h"
#include "sandbox.h"
#include "shim-parts.h"
#include "tree.h"
#include "vfork-into.h"

/* Where the leader finds the script fd given with -s. */
#define LEADER_SCRIPT_FD 3

/* SIGKILL when the parent (its thread, for a multithreaded one) dies. */
int set_death_signal(void) { return prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 ? 0 : -errno; }

/* The parent may have died before PR_SET_PDEATHSIG was set: then the parent is another process.
 * In the tasks' own PID namespace (-P) the shim's parent, the spawner, is outside and reads as 0;
 * once it is gone, the namespace's init is the parent, pid 1. */
int check_parent(pid_t expected) {
  pid_t parent = getppid();
  return parent == expected || (parent == 0 && shim.host_proc_fd >= 0) ? 0 : -ESRCH;
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

/* In the leader, the sandbox without namespaces (-F): no_new_privs, Landlock, and the seccomp
 * filter, which cuts the network with -N (sandbox.h). */
static void enter_sandbox_without_namespaces(int sync) {
  const char *call, *object;
  int dir_fds[MAX_WRITE_DIRS];
  int err;
  if ((err = set_no_new_privs(&call)) < 0) fail_start(sync, -err, "%s", call);
  if (shim.confined_writes && (err = open_write_dirs(shim.write_dirs, shim.write_count, dir_fds, &call, &object)) < 0)
    fail_start(sync, -err, "%s %s", call, object);
  if (shim.confined_writes && (err = confine_writes(dir_fds, shim.write_dirs, shim.write_count, &call, &object)) < 0) fail_start(sync, -err, "%s %s", call, object);
  if (!shim.confined_writes && (err = enter_own_domain(&call, &object)) < 0) fail_start(sync, -err, "%s %s", call, object);
  for (int i = 0; shim.confined_writes && i < shim.write_count; i++) close(dir_fds[i]);
  err = shim.isolated_network ? filter_system_calls_without_network(&call) : filter_system_calls(&call);
  if (err < 0) fail_start(sync, -err, "%s", call);
}

/* In the leader, after it joined its cgroups: the sandbox's steps in sandbox.h's order. */
static void enter_sandbox(int sync) {
  const char *call, *object;
  int dir_fds[MAX_WRITE_DIRS];
  int err;
  if (shim.without_namespaces) {
    enter_sandbox_without_namespaces(sync);
    return;
  }
  if (shim.isolated_network && (err = isolate_network(&call)) < 0) fail_start(sync, -err, "%s", call);
  if ((err = confine_mounts(shim.write_dirs, shim.write_count, shim.confined_writes, shim.devpts_fd, dir_fds, &call, &object)) < 0)
    fail_start(sync, -err, "%s %s", call, object);
  if ((err = drop_capabilities(&call)) < 0 || (err = set_no_new_privs(&call)) < 0) fail_start(sync, -err, "%s", call);
  if (shim.confined_writes && (err = confine_writes(dir_fds, shim.write_dirs, shim.write_count, &call, &object)) < 0) fail_start(sync, -err, "%s %s", call, object);
  if (!shim.confined_writes && (err = enter_own_domain(&call, &object)) < 0) fail_start(sync, -err, "%s %s", call, object);
  for (int i = 0; shim.confined_writes && i < shim.write_count; i++) close(dir_fds[i]);
  if ((err = filter_system_calls(&call)) < 0) fail_start(sync, -err, "%s", call);
}

static void exec_leader(const struct leader_start *start) __attribute__((noreturn));
static void exec_leader(const struct leader_start *start) {
  char **argv = start->argv;
  int sync = start->sync[1];
  int err;
  const char *call;
  /* dup2 onto another number clears close-on-exec: the leader keeps these. */
  for (int i = 0; shim.copying_output && i < 2; i++) {
    if (dup2(shim.leader_outputs[i], i + 1) < 0) fail_start(sync, errno, "dup2 fd %d to %d (the %s pipe)", shim.leader_outputs[i], i + 1, output_names[i]);
  }
  if (setpgid(0, 0) != 0) fail_start(sync, errno, "setpgid 0 0");
  /* Signals are still blocked here, so tcsetpgrp from what is yet a background group is not stopped by SIGTTOU. */
  if (shim.on_terminal && tcsetpgrp(0, getpid()) != 0) fail_start(sync, errno, "tcsetpgrp fd 0");
  if ((err = set_death_signal()) < 0) fail_start(sync, -err, "prctl PR_SET_PDEATHSIG");
  if ((err = check_parent(start->shim)) < 0) fail_start(sync, -err, "getppid: the shim is gone");
  /* dup2 onto another number clears close-on-exec: the leader keeps this one. */
  if (shim.script_fd >= 0 && dup2(shim.script_fd, LEADER_SCRIPT_FD) < 0) fail_start(sync, errno, "dup2 fd %d to %d (the script)", shim.script_fd, LEADER_SCRIPT_FD);
  if (shim.cgroup_dir != NULL && !start->in_cgroup && (err = join_cgroup(shim.cgroup_dir, &call)) < 0) fail_start(sync, -err, "%s %s/cgroup.procs", call, shim.cgroup_dir);
  for (int i = 0; i < shim.joined_count; i++) {
    if ((err = join_cgroup(shim.joined_dirs[i], &call)) < 0) fail_start(sync, -err, "%s %s/cgroup.procs", call, shim.joined_dirs[i]);
  }
  /* A sandbox refuses these among much else; a task without one, in the tasks' namespace or in
   * cgroup mode, gets them alone (sandbox.h). It takes CAP_SYS_ADMIN in the tasks' user namespace
   * (-P: they have one); without that namespace, tasks are the daemon's user in its namespaces. */
  if ((shim.cgroup_dir != NULL || shim.host_proc_fd >= 0) && !shim.sandboxed && (err = refuse_cgroup_escapes(&call)) < 0 && shim.host_proc_fd >= 0)
    fail_start(sync, -err, "%s", call);
  if (shim.sandboxed) enter_sandbox(sync);
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
__attribute__((noinline)) pid_t start_leader(char **argv, const int sync[2]) {
  struct leader_start start = {.argv = argv, .shim = getpid(), .sync = {sync[0], sync[1]}, .in_cgroup = 0};
  int forked = shim.policy_listener >= 0;
  int cgroup_fd = shim.cgroup_dir == NULL ? -1 : open(shim.cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
  struct pollfd fds[2] = {{.fd = sync, .events = POLLIN}, {.fd = shim.policy_listener, .events = POLLIN}};
  while (shim.policy_listener >= 0) {
    if (poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    if (fds[1].revents & POLLIN) exec_policy_serve(leader);
  }
}

/* Waits until the leader has exec'd (EOF on `sync`: 0) or failed (its reason on `sync`: 1); -errno
 * if `sync` cannot be read. */
int await_exec(int sync, char *reason, size_t size, pid_t leader) {
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

