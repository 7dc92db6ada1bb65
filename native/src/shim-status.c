/* What the shim tells the daemon, on STATUS_FD (fd 4), one line each: a word, a space, its fields.
 * This is the status protocol; src/process/shim-task.ts (ShimStatus) reads it.
 *
 *   line                                when                                              fields
 *   ----------------------------------  ------------------------------------------------  ------------------------------------------
 *   start PID                           once the leader has exec'd                        PID: the leader's pid, its group's id too
 *   start PID HOST_PID                  the same, with -P (the tasks' own PID namespace)  PID there, HOST_PID as the host sees it
 *   error ERRNO CALL                    a step before the leader's exec failed            ERRNO positive, decimal; CALL the failing
 *                                       (the leader never runs; its exit 125 follows      call and its object ("error 13 write
 *                                       if it was started)                                DIR/cgroup.procs")
 *   truncated STREAM cap|reserve        with -o, at any time: STREAM (stdout, stderr)     why: the cap, the disk's reserve
 *   truncated STREAM write ERRNO          first drops a byte                              or a failed write and its errno
 *   policy-denied|ask|gone ...          with -p, at any time: exec-policy.h's lines       as exec-policy.h says
 *   signalled                           once, when a kill's signal is sent while the      none
 *                                       leader has not exited (else its end was its own)
 *   exit CODE                           the leader exited, once its output is in the      its exit status
 *                                       files (with -o)
 *   signal N                            the leader was killed, as exit                    the signal's number
 *   output OUT_BYTES ERR_BYTES          with -o, once both pipes are at EOF               bytes the task wrote to each, kept or not
 *   cpu USEC                            just before the shim exits                        CPU time of its whole reaped subtree, in us
 *
 * In order: start or error first; then truncated, policy and signalled lines; then exit or signal; then
 * output, then cpu. Nothing else follows start but those: failures after it go to the task's
 * stderr as "hive-task-shim: CALL: ..." (with -o through the stderr stream, counted and capped like
 * the task's own). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "shim-parts.h"
#include "tree.h"

/* Writes one status line to STATUS_FD: 0 or -errno. */
int report(const char *format, ...) {
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
  const struct output_stream *stream = &shim.outputs[index];
  if (stream->cut == OUTPUT_CUT_WRITE) report("truncated %s write %d", output_names[index], stream->cut_errno);
  else report("truncated %s %s", output_names[index], stream->cut == OUTPUT_CUT_CAP ? "cap" : "reserve");
}

/* Copies up to `budget` bytes of output stream `index` into its file. */
void copy_output(int index, long long budget) {
  if (output_copy(&shim.outputs[index], shim.max_output, budget)) report_cut(index);
}

/* Reports "error ERRNO CALL"; on stderr instead when the status fd takes nothing. Returns 125. */
int fail_setup(int err, const char *format, ...) {
  FORMAT_CALL(call, format);
  if (report("error %d %s", err, call) < 0) dprintf(2, "hive-task-shim: %s: %s\n", call, strerror(err));
  return 125;
}

/* Writes the shim's own text into the task's stderr: its file, counted and capped with the task's
 * output, where the shim writes it; else fd 2, the task's own stderr (or terminal). */
void tell_task(const char *text, size_t length) {
  if (!shim.copying_output || shim.outputs[1].file != 2) { /* stderr is the task's, or its file not set up yet */
    while (length > 0) {
      ssize_t written = write(2, text, length);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) return;
      text += written;
      length -= (size_t)written;
    }
    return;
  }
  if (output_note(&shim.outputs[1], shim.max_output, text, length)) report_cut(1);
}

/* After the start only the leader's end may go to the status fd: later failures go to stderr. */
void log_failure(int err, const char *format, ...) {
  FORMAT_CALL(call, format);
  char line[LINE_MAX_BYTES];
  int length = snprintf(line, sizeof line, "hive-task-shim: %s: %s\n", call, strerror(err));
  if (length >= (int)sizeof line) length = sizeof line - 1;
  if (length > 0) tell_task(line, (size_t)length);
}

/* Writes one whole status line to STATUS_FD (the policy's, which may be longer than report's). */
void report_line(const char *line, size_t length) {
  while (length > 0) {
    ssize_t written = write(STATUS_FD, line, length);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return; /* the daemon is gone: nothing to do but carry on */
    line += written;
    length -= (size_t)written;
  }
}

/* Reports "start PID", or "start PID HOST_PID" with -P. The leader is unreaped until the shim's
 * loop runs, so the outer /proc still shows it as this shim's child. The host's /proc is closed
 * before the report: whoever reads "start" finds no fd of it left in the shim. */
void report_start(pid_t leader) {
  const char *call;
  pid_t outer = 0;
  if (shim.host_proc_fd >= 0) {
    outer = outer_pid_of_child(shim.host_proc_fd, leader, &call);
    close(shim.host_proc_fd);
    shim.host_proc_fd = -1;
  }
  if (outer < 0) log_failure(-outer, "%s", call);
  if (outer > 0) report("start %d %d", leader, outer);
  else report("start %d", leader);
}

/* The CPU time of every child reaped here: with the shim as subreaper, the task's whole subtree. */
void report_subtree_cpu(void) {
  struct rusage usage;
  if (getrusage(RUSAGE_CHILDREN, &usage) != 0) {
    log_failure(errno, "getrusage RUSAGE_CHILDREN");
    return;
  }
  long long usec = (long long)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000LL + usage.ru_utime.tv_usec + usage.ru_stime.tv_usec;
  report("cpu %lld", usec);
}

