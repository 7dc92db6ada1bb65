/* hive-task-init: makes the PID and mount namespace that every task runs in, and is its init.
 *
 *   hive-task-init [-r DIR]... [-h FILE]...
 *
 * Started once by the daemon's main thread. It unshares a PID and a mount namespace and forks
 * their first process, the init (pid 1 inside), which
 *   - makes every mount a slave of the host's (the host's later mounts still show inside; nothing
 *     mounted inside shows outside);
 *   - mounts a /proc of its own namespace, so that ps, pgrep, pkill, killall and kill -1 in a task
 *     see and reach the tasks' processes only, never the daemon or its spawners;
 *   - binds each -r DIR onto itself read-only (the daemon's state dir: tasks read their output and
 *     change nothing there) and /dev/null over each -h FILE (the daemon's token: tasks read none);
 *   - reaps every orphan that comes to it, for good.
 * Once the init is set up, this process writes "ready PID" (the init's pid outside) on fd 1; or
 * "error ERRNO CALL" when a step failed, and exits 1. The daemon's spawners join the namespaces
 * through a pidfd of the init (setns), so every shim they fork, and every task, runs inside.
 *
 * From inside its namespace the kernel delivers an init no signal it has no handler for, so a
 * task's `kill -9 -1` or `kill -9 1` cannot end it. This process stays as the init's parent and
 * waits for it: it dies with the daemon's thread (PR_SET_PDEATHSIG), the init with it, and every
 * process inside with the init (the kernel's rule for a PID namespace). At the daemon's stop it gets
 * SIGTERM: it kills the init, waits until the init and everything inside are gone, and exits 0, so
 * that the daemon, once fd 1 closes, leaves no process of the namespace behind (nor in its cgroup).
 * Should the init die otherwise, this process says so on stderr, "hive-task-init: ...", and exits 1:
 * the daemon sees fd 1 close. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define USAGE "usage: hive-task-init [-r DIR]... [-h FILE]...\n"
#define MAX_PATHS 16

static const char *read_only_dirs[MAX_PATHS], *hidden_files[MAX_PATHS];
static int read_only_count = 0, hidden_count = 0;

/* In the init: "ERRNO CALL" on `sync`, then exit. */
static void fail_setup(int sync, int err, const char *call, const char *object) __attribute__((noreturn));
static void fail_setup(int sync, int err, const char *call, const char *object) {
  dprintf(sync, "%d %s %s", err, call, object);
  _exit(1);
}

static void set_up_mounts(int sync) {
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) fail_setup(sync, errno, "mount --make-rslave", "/");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) fail_setup(sync, errno, "mount proc", "/proc");
  for (int i = 0; i < read_only_count; i++) {
    const char *dir = read_only_dirs[i];
    if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) != 0) fail_setup(sync, errno, "mount --rbind", dir);
    if (mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) != 0) fail_setup(sync, errno, "mount -o remount,bind,ro", dir);
  }
  for (int i = 0; i < hidden_count; i++) {
    if (mount("/dev/null", hidden_files[i], NULL, MS_BIND, NULL) != 0) fail_setup(sync, errno, "mount --bind /dev/null", hidden_files[i]);
  }
}

/* Reaps whatever exits, for good: the orphans of every task come here. */
static void reap_forever(void) __attribute__((noreturn));
static void reap_forever(void) {
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    sigwaitinfo(&child, NULL);
  }
}

static pid_t init_pid;
static volatile sig_atomic_t stopping = 0;

/* SIGTERM, the daemon's stop: the init is killed; its reaping (once every process inside is gone)
 * ends the wait in main. */
static void stop_init(int signal) {
  (void)signal;
  stopping = 1;
  kill(init_pid, SIGKILL);
}

static void run_init(int sync) __attribute__((noreturn));
static void run_init(int sync) {
  /* Blocked, not ignored: SIGCHLD stays pending for sigwaitinfo, and the rest wait unseen. */
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_setup(sync, errno, "prctl", "PR_SET_PDEATHSIG");
  prctl(PR_SET_NAME, "hive-task-init", 0, 0, 0);
  set_up_mounts(sync);
  if (chdir("/") != 0) fail_setup(sync, errno, "chdir", "/");
  /* Only the outer process holds the daemon's pipe, so that it reads EOF when that one ends. */
  if (dup2(0, 1) < 0) fail_setup(sync, errno, "dup2", "fd 0 to 1");
  close(sync); /* EOF: set up */
  reap_forever();
}

static int parse_arguments(int argc, char **argv) {
  for (int i = 1; i < argc; i += 2) {
    int read_only = strcmp(argv[i], "-r") == 0;
    if ((!read_only && strcmp(argv[i], "-h") != 0) || i + 1 >= argc || argv[i + 1][0] != '/') return -EINVAL;
    if ((read_only ? read_only_count : hidden_count) == MAX_PATHS) return -E2BIG;
    if (read_only) read_only_dirs[read_only_count++] = argv[i + 1];
    else hidden_files[hidden_count++] = argv[i + 1];
  }
  return 0;
}

/* Reads the init's set-up result from `sync`: 0 once it closed it with nothing said. */
static int await_setup(int sync, char *reason, size_t size) {
  size_t used = 0;
  for (;;) {
    ssize_t got = read(sync, reason + used, size - used - 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0 || (used += (size_t)got) == size - 1) break;
  }
  reason[used] = '\0';
  return used > 0 ? -1 : 0;
}

int main(int argc, char **argv) {
  pid_t parent = getppid();
  int err = parse_arguments(argc, argv);
  if (err < 0) {
    dprintf(2, "hive-task-init: argv: %s\n" USAGE, strerror(-err));
    printf("error %d argv\n", -err);
    return 2;
  }
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) {
    printf("error %d prctl PR_SET_PDEATHSIG (or the daemon is gone)\n", errno ? errno : ESRCH);
    return 1;
  }
  if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
    printf("error %d unshare CLONE_NEWPID|CLONE_NEWNS\n", errno);
    return 1;
  }
  int sync[2];
  if (pipe2(sync, O_CLOEXEC) != 0) {
    printf("error %d pipe2\n", errno);
    return 1;
  }
  pid_t init = fork();
  if (init < 0) {
    printf("error %d fork\n", errno);
    return 1;
  }
  if (init == 0) {
    close(sync[0]);
    run_init(sync[1]);
  }
  close(sync[1]);
  char reason[512];
  if (await_setup(sync[0], reason, sizeof reason) < 0) {
    printf("error %s\n", reason);
    return 1;
  }
  init_pid = init;
  /* No SA_RESTART: nothing to restart, the wait below retries on EINTR. */
  struct sigaction stop = {.sa_handler = stop_init};
  sigemptyset(&stop.sa_mask);
  if (sigaction(SIGTERM, &stop, NULL) != 0) {
    printf("error %d sigaction SIGTERM\n", errno);
    return 1;
  }
  printf("ready %d\n", (int)init);
  fflush(stdout);
  int status;
  while (waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  if (stopping) return 0;
  dprintf(2, "hive-task-init: the init (pid %d) ended (%s %d): every task in its namespace ended with it\n", (int)init,
          WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  return 1;
}
