/* The programs one exec runs (exec-views.h). */
#define _GNU_SOURCE
#include "exec-views.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec-identity.h"
#include "exec-resolve.h"
#include "exec-unwrap.h"

/* Each view adds at most two words (a #! line's interpreter and argument). */
#define VIEW_MAX_WORDS (EXEC_MAX_WORDS + 2 * EXEC_MAX_VIEWS)

/* What a view found past the first holds: its paths, its #! line, its argv. */
struct view_store {
  char path[PATH_MAX];
  char real[PATH_MAX];
  char line[SHEBANG_BYTES + 1];
  char *argv[VIEW_MAX_WORDS];
};

/* One more than the views, to know whether the last one runs yet another program. */
static struct view_store stores[EXEC_MAX_VIEWS + 1];
static struct exec_call calls[EXEC_MAX_VIEWS + 1];
/* Each view's file (-1: none to look into) and the name the kernel gives it to a #! interpreter. */
static int files[EXEC_MAX_VIEWS + 1];
static const char *named[EXEC_MAX_VIEWS + 1];
static int opened[EXEC_MAX_VIEWS + 1], opened_count = 0;

/* View `i`'s argv: the `lead_count` words of `lead` (a NULL one left out), then those of `rest`
 * from its argv[1]. */
static void set_argv(int i, const char *const *lead, int lead_count, const struct exec_call *rest) {
  char **argv = stores[i].argv;
  int argc = 0;
  for (int w = 0; w < lead_count; w++) {
    if (lead[w] != NULL) argv[argc++] = (char *)lead[w];
  }
  for (int w = 1; w < rest->argc && argc < VIEW_MAX_WORDS; w++) argv[argc++] = rest->argv[w];
  calls[i].argv = argv;
  calls[i].argc = argc;
}

/* Opens the file thread `pid` execs by `name` (from its cwd) as view `i`: 0, or -errno. */
static int open_view(pid_t pid, const char *name, int i) {
  struct view_store *store = &stores[i];
  int err = task_absolute_path(pid, name, store->path, sizeof store->path);
  if (err < 0) return err;
  int fd = resolve_as_task(pid, AT_FDCWD, 0, name, store->real, sizeof store->real);
  if (fd < 0) return fd;
  opened[opened_count++] = files[i] = fd;
  calls[i] = (struct exec_call){.path = store->path, .real = store->real, .identity = identity_of_file(fd)};
  named[i] = name;
  return 0;
}

/* 1 where view `i` has the words the longest rule looks at, or all of argv; else -EAGAIN. */
static int enough_words(const struct exec_read *exec, int i) {
  return exec->more_words && calls[i].argc < exec_rules_words() ? -EAGAIN : 1;
}

/* The program that loader view `i - 1` runs, as view `i`: 1, 0 (none), or -EAGAIN. */
static int loader_view(pid_t pid, const struct exec_read *exec, int i) {
  const struct exec_call *loader = &calls[i - 1];
  int program;
  const char *argv0;
  int found = loader_program(loader->argv, loader->argc, &program, &argv0);
  if (found == -EAGAIN) return exec->more_words ? -EAGAIN : 0;
  if (found == 0) return 0;
  const char *name = loader->argv[program];
  /* A bare name is looked up on the loader's library path: it is matched by that name. */
  if (strchr(name, '/') == NULL) {
    calls[i] = (struct exec_call){.path = name};
    files[i] = -1;
  } else if (open_view(pid, name, i) < 0) return 0;
  const struct exec_call rest = {.argv = loader->argv + program, .argc = loader->argc - program};
  set_argv(i, (const char *[]){argv0}, 1, &rest);
  return enough_words(exec, i);
}

/* The builtin git view `i - 1` runs for its argv[0] git-NAME, as view `i` (git NAME ...): 1 or 0. */
static int git_view(int i) {
  const struct exec_call *git = &calls[i - 1];
  const char *builtin = git->argc > 0 ? git_builtin(git->argv[0]) : NULL;
  if (builtin == NULL) return 0;
  calls[i] = (struct exec_call){.path = git->path, .real = git->real, .identity = git->identity};
  files[i] = -1;
  set_argv(i, (const char *[]){"git", builtin}, 2, git);
  return 1;
}

/* The program that multi-call view `i - 1` (busybox) runs, named by its argv, as view `i`: 1, 0
 * or -EAGAIN. It is matched by that name alone: the file is the same whatever it runs. */
static int applet_view(const struct exec_read *exec, int i) {
  const struct exec_call *multi = &calls[i - 1];
  int word = applet_word(multi->argv, multi->argc);
  if (word == -EAGAIN) return exec->more_words ? -EAGAIN : 0;
  if (word < 0) return 0;
  calls[i] = (struct exec_call){.path = multi->argv[word]};
  files[i] = -1;
  const struct exec_call rest = {.argv = multi->argv + word, .argc = multi->argc - word};
  set_argv(i, (const char *[]){multi->argv[word]}, 1, &rest);
  return enough_words(exec, i);
}

/* The first bytes of the regular file at `fd` into `buffer`: their count, or -errno. */
static ssize_t read_head(int fd, char buffer[SHEBANG_BYTES + 1]) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return -EACCES;
  char name[64];
  snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
  int file = open(name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (file < 0) return -errno;
  ssize_t got;
  while ((got = pread(file, buffer, SHEBANG_BYTES, 0)) < 0 && errno == EINTR) continue;
  int err = got < 0 ? -errno : 0;
  close(file);
  return err < 0 ? err : got;
}

/* The interpreter of #! script view `i - 1`, as the kernel runs it, as view `i`: 1 or 0. */
static int script_view(pid_t pid, int i) {
  const char *name, *arg;
  ssize_t length = files[i - 1] < 0 ? -EBADF : read_head(files[i - 1], stores[i].line);
  if (length < 0 || parse_shebang(stores[i].line, (size_t)length, &name, &arg) < 0) return 0;
  if (open_view(pid, name, i) < 0) return 0;
  set_argv(i, (const char *[]){name, arg, named[i - 1]}, 3, &calls[i - 1]);
  return 1;
}

static int next_view(pid_t pid, const struct exec_read *exec, int i) {
  const struct exec_identity *identity = calls[i - 1].identity;
  if (identity != NULL && identity->kind == IDENTITY_LOADER) return loader_view(pid, exec, i);
  if (identity != NULL && identity->kind == IDENTITY_GIT) return git_view(i);
  if (identity != NULL && identity->kind == IDENTITY_APPLET) return applet_view(exec, i);
  return script_view(pid, i);
}

int exec_views_find(const struct seccomp_notif *request, const struct exec_read *exec, struct exec_views *views) {
  exec_views_release();
  calls[0] = exec->call;
  calls[0].identity = exec->fd < 0 ? NULL : identity_of_file(exec->fd);
  files[0] = exec->fd;
  named[0] = exec->named;
  int count = 1, found = 1;
  while (count <= EXEC_MAX_VIEWS && (found = next_view((pid_t)request->pid, exec, count)) == 1) count++;
  if (found == -EAGAIN) return -EAGAIN;
  views->count = count > EXEC_MAX_VIEWS ? EXEC_MAX_VIEWS : count;
  memcpy(views->calls, calls, (size_t)views->count * sizeof *calls);
  views->unseen = count > EXEC_MAX_VIEWS ? "it runs programs through more than 8 others (loaders, interpreters), past what the policy follows" : NULL;
  return 0;
}

void exec_views_release(void) {
  while (opened_count > 0) close(opened[--opened_count]);
}
