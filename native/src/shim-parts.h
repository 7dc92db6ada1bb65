/* What the parts of the shim share (shim.c runs them): its command line and state, and the calls
 * each part offers the others. shim-status.c tells the daemon and the task; shim-leader.c starts
 * the leader; shim-signals.c kills, reaps and reads control lines. */
#ifndef HIVE_SHIM_PARTS_H
#define HIVE_SHIM_PARTS_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "shim-output.h"

#define CONTROL_FD 3
#define STATUS_FD 4
#define LINE_MAX_BYTES (PATH_MAX + 128)
/* More cgroups the leader joins (cgroup v1 hierarchies that hold the task's resource limits). */
#define MAX_JOINED 4
#define MAX_WRITE_DIRS 64

/* Declares `call`, the failing call and its object, formatted from the function's own arguments. */
#define FORMAT_CALL(call, format)             \
  char call[LINE_MAX_BYTES - 16];             \
  va_list args;                               \
  va_start(args, format);                     \
  vsnprintf(call, sizeof call, format, args); \
  va_end(args)

/* The shim's command line as run_shim read it, and what it holds while the task runs. */
struct shim_state {
  const char *cgroup_dir;
  const char *joined_dirs[MAX_JOINED];
  int joined_count;
  int on_terminal;
  /* The -s, -P, -D and -p fds, or -1. */
  int script_fd, host_proc_fd, devpts_fd, policy_fd;
  /* The command policy's seccomp listener, or -1 without a policy. */
  int policy_listener;
  /* The sandbox: -S, -N, -L, -F and the -w folders. */
  int sandboxed, isolated_network, confined_writes, without_namespaces;
  const char *write_dirs[MAX_WRITE_DIRS];
  int write_count;
  /* With -o: the task's stdout and stderr, copied here into fds 1 and 2, at most `max_output` bytes
   * each; the pipes' write ends until the leader has its own. */
  int copying_output;
  long long max_output;
  struct output_stream outputs[2];
  int leader_outputs[2];
};

/* One per process: run_shim runs once in it. */
extern struct shim_state shim;
extern const char *const output_names[2];

/* shim-status.c: status lines (its table), and the shim's messages to the task's stderr. */
int report(const char *format, ...) __attribute__((format(printf, 1, 2)));
void report_line(const char *line, size_t length);
void report_start(pid_t leader);
void report_subtree_cpu(void);
int fail_setup(int err, const char *format, ...) __attribute__((format(printf, 2, 3)));
void log_failure(int err, const char *format, ...) __attribute__((format(printf, 2, 3)));
void tell_task(const char *text, size_t length);
void copy_output(int index, long long budget);

/* shim-leader.c: the leader's start. */
int set_death_signal(void);
int check_parent(pid_t expected);
pid_t start_leader(char **argv, const int sync[2]);
int await_exec(int sync, char *reason, size_t size, pid_t leader);

/* shim-signals.c: kills, reaping and the control lines. */
int block_signals(void);
int open_child_events(void);
int reap_children(pid_t leader, int *leader_done);
void reap_leader(pid_t leader, int *leader_done);
int cgroup_emptying(void);
int emptying_events_fd(void);
int read_control(char *buffer, size_t *used, size_t size, pid_t leader, int *leader_done);

#endif
