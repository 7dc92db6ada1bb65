/* The programs one exec runs, each as the rules see it (exec_call): the file executed; then, in
 * turn, what runs in it: the program a dynamic loader runs (`ld.so PROGRAM ARGS` is PROGRAM ARGS),
 * a #! script's interpreter with the argv the kernel gives it (INTERPRETER [ARG] SCRIPT ARGS), the
 * builtin git runs for an argv[0] of git-NAME (git NAME ARGS), and the applet busybox runs for its
 * argv[0] (or `busybox APPLET`). Each file is told by what it is (exec-identity.h): a copy, a hard
 * link or a memfd of a ruled program is that program. */
#ifndef HIVE_EXEC_VIEWS_H
#define HIVE_EXEC_VIEWS_H

#include "exec-notify.h"

/* The most programs one exec is followed through; a deeper one cannot be matched whole. */
#define EXEC_MAX_VIEWS 8

struct exec_views {
  struct exec_call calls[EXEC_MAX_VIEWS];
  int count;
  /* Why the exec cannot be matched whole, or NULL. */
  const char *unseen;
};

/* Finds the programs that the exec of `request`, read into `exec`, runs: 0, or -EAGAIN when a
 * program's words go past those read (read them all with read_exec_words, and call again). */
int exec_views_find(const struct seccomp_notif *request, const struct exec_read *exec, struct exec_views *views);

/* Closes the files exec_views_find opened. */
void exec_views_release(void);

#endif
