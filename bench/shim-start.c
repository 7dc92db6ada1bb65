/* shim-start: the CPU a task's start costs in the spawner and below it, three ways, alternated in
 * chunks of 25 tasks within each round so that every way meets the same load:
 *   exec    posix_spawn of the hive-task-shim executable (the standalone shim);
 *   fork    fork_shim, a fork of this (small, single-threaded) process running the shim's code, as
 *           the spawner does now;
 *   leader  posix_spawn of the leader alone: the floor, what the task itself costs.
 * Each task is run to its end, one at a time; "parent" is this process's CPU (the spawner's share),
 * "children" what it reaped (the shim, and the leader the shim reaped), from getrusage.
 *
 *   cd native/src && gcc -O2 -std=gnu11 -o /tmp/shim-start ../../bench/shim-start.c shim-fork.c spawn.c \
 *       shim.c shim-leader.c shim-signals.c shim-status.c shim-output.c tree.c sandbox.c sandbox-mounts.c \
 *       sandbox-kernel.c sandbox-privileges.c vfork-into.c exec-policy.c exec-notify.c exec-resolve.c \
 *       exec-rules.c exec-text.c exec-identity.c exec-views.c exec-unwrap.c exec-mask.c sha256.c
 *   (the shim's sources in binding.gyp, shim-main.c aside, with shim-fork.c and spawn.c)
 *   /tmp/shim-start TASKS ROUNDS SHIM_EXECUTABLE PROGRAM [ARG...]   (absolute paths: tasks start in /)
 *   e.g. /tmp/shim-start 1000 3 $PWD/native/build/Release/hive-task-shim /bin/bash -c 'echo hello' */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../native/src/shim-fork.h"
#include "../native/src/spawn.h"

#define CHUNK 25
#define WAYS 3

static const char *const WAY_NAMES[WAYS] = {"exec", "fork", "leader"};

static double cpu_us(int who) {
  struct rusage usage;
  getrusage(who, &usage);
  return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e6 + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
}

/* argv's strings, then envp's, one after the other in one malloc'd block, as a spawner request holds them. */
static char **pack_strings(char **strings, int count, char **block, size_t *used) {
  char **vector = calloc((size_t)count + 1, sizeof *vector);
  for (int i = 0; i < count; i++) {
    vector[i] = *block + *used;
    strcpy(vector[i], strings[i]);
    *used += strlen(strings[i]) + 1;
  }
  return vector;
}

/* Starts one task the given way and waits for its end; exits on a failure to start. */
static void run_task(int way, const char *shim, char **shim_argv, char **leader_argv, char **envp, int devnull) {
  int channel[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) exit(1);
  int fds[5] = {devnull, devnull, devnull, channel[1], channel[1]};
  pid_t pid = 0;
  int pidfd = -1, err;
  if (way == 0) err = spawn_session_leader(shim, shim_argv, envp, "/", fds, 5, &pid, &pidfd);
  else if (way == 1) err = fork_shim(shim_argv, envp, "/", fds, 5, &pid);
  else err = spawn_session_leader(leader_argv[0], leader_argv, envp, "/", fds, 3, &pid, &pidfd);
  if (err != 0) {
    fprintf(stderr, "shim-start: %s: %s\n", WAY_NAMES[way], strerror(-err));
    exit(1);
  }
  if (pidfd >= 0) close(pidfd);
  close(channel[1]);
  waitpid(pid, NULL, 0);
  char lines[256];
  while (read(channel[0], lines, sizeof lines) > 0) {
  }
  close(channel[0]);
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: shim-start TASKS ROUNDS SHIM_EXECUTABLE PROGRAM [ARG...]\n");
    return 2;
  }
  int tasks = atoi(argv[1]), rounds = atoi(argv[2]), devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  char parent[16], *env_strings[] = {"PATH=/usr/bin:/bin", "HIVE_BASH_RUN=shim-start"};
  snprintf(parent, sizeof parent, "%d", (int)getpid());
  int program_count = argc - 4, shim_count = program_count + 3;
  char **shim_strings = calloc((size_t)shim_count, sizeof *shim_strings);
  shim_strings[0] = argv[3];
  shim_strings[1] = parent;
  shim_strings[2] = "-";
  memcpy(shim_strings + 3, argv + 4, (size_t)program_count * sizeof *argv);
  char *block = malloc(1 << 16);
  size_t used = 0;
  char **shim_argv = pack_strings(shim_strings, shim_count, &block, &used);
  char **envp = pack_strings(env_strings, 2, &block, &used);
  char **leader_argv = shim_argv + 3;
  if (load_memory_layout() != 0) fprintf(stderr, "shim-start: /proc/self/stat unread: the forks show this command line\n");
  for (int round = 0; round < rounds; round++) {
    double parent_us[WAYS] = {0}, children_us[WAYS] = {0};
    for (int chunk = 0; chunk < tasks / CHUNK; chunk++) {
      for (int turn = 0; turn < WAYS; turn++) {
        int way = (turn + chunk) % WAYS; /* each way goes first as often as the others */
        double self = cpu_us(RUSAGE_SELF), reaped = cpu_us(RUSAGE_CHILDREN);
        for (int i = 0; i < CHUNK; i++) run_task(way, argv[3], shim_argv, leader_argv, envp, devnull);
        parent_us[way] += cpu_us(RUSAGE_SELF) - self;
        children_us[way] += cpu_us(RUSAGE_CHILDREN) - reaped;
      }
    }
    double count = tasks / CHUNK * CHUNK;
    for (int way = 0; way < WAYS; way++) {
      printf("round %d %-6s parent %7.1f us  children %7.1f us  total %7.1f us a task\n", round, WAY_NAMES[way], parent_us[way] / count,
             children_us[way] / count, (parent_us[way] + children_us[way]) / count);
    }
    fflush(stdout);
  }
  return 0;
}
