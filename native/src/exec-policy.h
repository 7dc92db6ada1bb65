/* The command policy in a task's shim: every exec of every process of the task waits in the kernel
 * until the shim has matched it against the operator's rules (exec-rules.h): allowed, it goes on;
 * denied, it fails with EACCES (a shell then prints "Permission denied" and exits 126), a line in
 * the task's stderr says which rule refused what and why, and the daemon is told; asked, it waits
 * until the daemon answers (a person decided, or no one did in time).
 *
 * Status lines to the daemon (each ends with a newline; JSON is the exec as read):
 *   policy-denied {"rule":R,"path":P,"argv":[...],"cut":B,"command":C,"reason":TEXT}   R -1: the default, -2: none (the exec could not be followed whole)
 *   policy-ask {"seq":N,"rule":R,"path":P,"argv":[...],"cut":B,"command":C}
 * (C: the program's file name and its arguments, quoted as a shell reads them back, cut at 1 KiB)
 *   policy-gone N      the process of ask N died, or started its exec again under a new ask
 * Control lines from the daemon:
 *   allow N            the exec of ask N goes on
 *   refuse N REASON    it fails with EACCES; REASON (one line) is told in the task's stderr */
#ifndef HIVE_EXEC_POLICY_H
#define HIVE_EXEC_POLICY_H

#include <stddef.h>
#include <sys/types.h>

struct exec_policy_io {
  /* Writes one status line (with its newline) to the daemon. */
  void (*report)(const char *line, size_t length);
  /* Writes text into the task's stderr, as the shim's own (counted and capped with the task's). */
  void (*tell_task)(const char *text, size_t length);
};

/* Loads the compiled policy from `policy_fd` and installs the seccomp filter on the calling shim
 * (exec-notify.h), whose children inherit it: the listener's fd, or -errno with `*call` set. */
int exec_policy_start(int policy_fd, const struct exec_policy_io *io, const char **call);

/* Answers the next exec waiting on the listener. The execs of `passing` (the leader before its
 * exec of the task's shell; 0 for none) go on unmatched. */
void exec_policy_serve(pid_t passing);

/* Tells the daemon of asks whose process died or started its exec again. */
void exec_policy_sweep(void);

/* Carries out a control line if it is the policy's ("allow N", "refuse N REASON"): 1 when it
 * was, 0 when it is another's, -EINVAL when it was the policy's but malformed. */
int exec_policy_control(const char *line);

#endif
