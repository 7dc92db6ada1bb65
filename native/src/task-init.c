/* hive-task-init: makes the namespaces that every task runs in, and is their init.
 *
 *   hive-task-init [-r DIR]... [-s DIR]... [-h FILE]... [-H DIR]...
 *
 * Started once by the daemon's main thread. It unshares a PID, a mount and an IPC namespace (or, where the
 * daemon may not make namespaces or trace what it makes: a user that is not root, root in a container
 * without CAP_SYS_ADMIN or CAP_SYS_PTRACE, it clones the init into a user namespace of its own too, in
 * which the init may, and where the init runs itself again: `hive-task-init --init SYNC ARGS...`)
 * and forks their first process, the init (pid 1 inside), which
 *   - sets up the mounts of task-mounts.h: every mount a slave of the host's, a /proc of its own
 *     (so that ps, pgrep, pkill, killall and kill -1 in a task see and reach the tasks' processes
 *     only), the state dir (-r) read-only (with -s, hidden but for its output folder), the token
 *     and policy file (-h) or their folders and the
 *     harness socket's (-H) hidden, every cgroup mount read-only;
 *   - moves into a user namespace of its own, which a child it forks first maps to the ids of its
 *     own (the same ids inside and out), and then into a mount namespace that this user namespace
 *     owns: a copy of the one set up, in which the kernel locks every mount, so that no task, root
 *     inside or not, can unmount or remount what hides or guards the daemon's files;
 *   - is no longer dumpable, so that no task may trace it or touch its memory through /proc;
 *   - reaps every orphan that comes to it, for good, and kills each that comes alive.
 * Once the init is set up, this process writes on fd 1 a line "note ..." for each thing the init
 * could not have ("note nouser ERRNO": a user namespace of its own, so the mounts are made but a
 * task that is root can undo them; "note noproc ERRNO": a /proc of its own, so tasks see the old
 * one, its processes, whose pids mean other processes or none inside; "note nosandbox ERRNO CALL
 * [OBJECT]": a task's sandbox, tried by a child of the init, failed at CALL), then "ready PID"
 * (the init's pid outside); or "error ERRNO CALL" when a step failed, and exits 1. The daemon's
 * spawners join the namespaces
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
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "parse.h"
#include "sandbox-probe.h"
#include "sys.h"
#include "self-check.h"
#include "userns-map.h"
#include "task-mounts.h"

#define USAGE "usage: hive-task-init [-r DIR]... [-s DIR]... [-h FILE]... [-H DIR]...\n"

static struct task_mounts plan;

/* In the init: "ERRNO CALL OBJECT" on `sync`, then exit. */
static void fail_setup(int sync, int err, const char *call, const char *object) __attribute__((noreturn));
static void fail_setup(int sync, int err, const char *call, const char *object) {
  dprintf(sync, "%d %s %s", err, call, object);
  _exit(1);
}

/* In the init's mapper, a child forked in the init's namespaces: once the init has a user namespace
 * of its own (a byte on `ask`), maps it from here, its parent namespace, through the init's /proc
 * directory open at `init_dir`; exits with 0 or the errno. */
static void map_parent(int ask, int init_dir) __attribute__((noreturn));
static void map_parent(int ask, int init_dir) {
  char byte;
  if (read(ask, &byte, 1) != 1) _exit(0); /* the init has none */
  int err = write_identity_map(init_dir, "uid_map");
  if (err == 0) err = write_identity_map(init_dir, "gid_map");
  _exit(-err);
}

/* In the init: a user namespace of its own, mapped by a child it forks first (which stays in the
 * parent namespace, where it may write the map), then a mount namespace that it owns: a copy of
 * the one set up, in which the kernel locks every mount. Where the kernel refuses the user
 * namespace, says "nouser ERRNO\n" on `sync` and goes on without: the mounts stay, unlocked. */
static void lock_mounts(int sync) {
  int ask[2];
  if (pipe2(ask, O_CLOEXEC) != 0) fail_setup(sync, errno, "pipe2", "(to its mapper)");
  /* Its own entry of whatever /proc is mounted, not one by pid: where the kernel refused the init a
   * /proc of its own, this one is of another PID namespace, in which pid 1 is another process. */
  int own_dir = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (own_dir < 0) fail_setup(sync, errno, "open", "/proc/self");
  pid_t mapper = fork();
  if (mapper < 0) fail_setup(sync, errno, "fork", "(its mapper)");
  if (mapper == 0) {
    close(ask[1]);
    map_parent(ask[0], own_dir);
  }
  close(ask[0]);
  close(own_dir);
  int refused = unshare(CLONE_NEWUSER) != 0 ? errno : 0;
  if (refused == 0 && write(ask[1], "u", 1) != 1) fail_setup(sync, errno, "write", "(to its mapper)");
  close(ask[1]);
  int status;
  while (waitpid(mapper, &status, 0) < 0 && errno == EINTR) {
  }
  if (refused != 0) {
    dprintf(sync, "nouser %d\n", refused);
    return;
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail_setup(sync, WIFEXITED(status) ? WEXITSTATUS(status) : ECHILD, "write /proc/self/uid_map and gid_map", "(its mapper)");
  if (unshare(CLONE_NEWNS) != 0) fail_setup(sync, errno, "unshare", "CLONE_NEWNS (in its user namespace)");
}

/* How often the init looks for live children (orphans whose shim is gone): ms. */
#define ORPHAN_SWEEP_MS 1000

/* SIGKILLs every child of the init. A task's process comes to the
 * init only once its shim (the subreaper of the task's tree, which outlives the tree) is gone, as
 * when the task kills it: it is what no kill of the daemon's could reach any more, and no task's
 * own. Each is signalled through its /proc folder as a pidfd (that /proc may number processes as
 * an outer namespace does); a child cannot be reaped, so its pid not reused, but by the init. */
static void kill_children(void) {
  static char pids[65536];
  if (read_small_file(AT_FDCWD, "/proc/thread-self/children", pids, sizeof pids) <= 0) return;
  for (char *at = pids, *end; *at != '\0'; at = end) {
    long pid = strtol(at, &end, 10);
    if (end == at) break;
    char path[32];
    snprintf(path, sizeof path, "/proc/%ld", pid);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) continue;
    sys_pidfd_send_signal(fd, SIGKILL);
    close(fd);
  }
}

/* Reaps whatever exits, for good, and ends every orphan that comes to it (kill_children): looked
 * for each ORPHAN_SWEEP_MS, since the kernel tells a parent of no child it is handed, and at once
 * after a child's end (an orphan killed hands its own children on). Never waits on one that is
 * killed: one frozen by a cgroup v1 freezer stays until it is thawed. */
static void reap_forever(void) __attribute__((noreturn));
static void reap_forever(void) {
  sigset_t child;
  sigemptyset(&child);
  sigaddset(&child, SIGCHLD);
  const struct timespec sweep = {ORPHAN_SWEEP_MS / 1000, (ORPHAN_SWEEP_MS % 1000) * 1000000L};
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    kill_children();
    sigtimedwait(&child, NULL, &sweep);
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

/* Closes every fd from `first` on but `keep`. */
static void close_from(int first, int keep) {
  long max = sysconf(_SC_OPEN_MAX);
  for (int fd = first; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
    if (fd != keep) close(fd);
}

/* The init once it may go on: its mounts, its user namespace and the locked copy of its mount
 * namespace, then no longer dumpable (a task may then neither trace it nor read or write its memory
 * in /proc: that takes CAP_SYS_PTRACE in the user namespace its memory belongs to, which no task
 * holds, see main), then it reaps. */
static void finish_init(int sync) __attribute__((noreturn));
static void finish_init(int sync) {
  const char *call, *object;
  int proc_refused = 0;
  int err = set_up_task_mounts(&plan, &proc_refused, &call, &object);
  if (err < 0) fail_setup(sync, -err, call, object);
  if (proc_refused != 0) dprintf(sync, "noproc %d\n", proc_refused);
  lock_mounts(sync);
  char reason[512];
  if (probe_sandbox(reason, sizeof reason) < 0) dprintf(sync, "nosandbox %s\n", reason);
  if (prctl(PR_SET_DUMPABLE, 0) != 0) fail_setup(sync, errno, "prctl", "PR_SET_DUMPABLE 0");
  if (chdir("/") != 0) fail_setup(sync, errno, "chdir", "/");
  /* Only the outer process holds the daemon's pipe, so that it reads EOF when that one ends; and
   * the init holds nothing but /dev/null (fd 0) a task could open again through /proc/1/fd: not
   * the daemon's stderr, nor anything else it was given. */
  if (dup2(0, 1) < 0 || dup2(0, 2) < 0) fail_setup(sync, errno, "dup2", "fd 0 to 1 and 2");
  close_from(3, sync);
  close(sync); /* EOF: set up */
  reap_forever();
}

/* This program's own arguments (the mount plan's), run again by an init that must own its memory. */
static char **own_arguments;

/* In an init cloned into a user namespace of its own: runs this program again as
 * `hive-task-init --init SYNC ARGS...`, so that its memory belongs to that user namespace (an exec
 * gives a process's memory the user namespace it runs in; a clone keeps its parent's). */
static void run_again_as_init(int sync) __attribute__((noreturn));
static void run_again_as_init(int sync) {
  int count = 0;
  while (own_arguments[count] != NULL) count++;
  char fd[16];
  snprintf(fd, sizeof fd, "%d", sync);
  char *argv[count + 3];
  argv[0] = "hive-task-init";
  argv[1] = "--init";
  argv[2] = fd;
  for (int i = 1; i <= count; i++) argv[i + 2] = own_arguments[i];
  if (fcntl(sync, F_SETFD, 0) != 0) fail_setup(sync, errno, "fcntl", "F_SETFD 0 (the set-up pipe)");
  execv("/proc/self/exe", argv);
  fail_setup(sync, errno, "execv", "/proc/self/exe");
}

static void run_init(int sync, int go, int again) __attribute__((noreturn));
static void run_init(int sync, int go, int again) {
  /* Blocked, not ignored: SIGCHLD stays pending for sigwaitinfo, and the rest wait unseen. */
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_setup(sync, errno, "prctl", "PR_SET_PDEATHSIG");
  prctl(PR_SET_NAME, "hive-task-init", 0, 0, 0);
  char mapped;
  if (read(go, &mapped, 1) != 1) fail_setup(sync, EPIPE, "read", "(the outer process's go-ahead)");
  close(go);
  if (again) run_again_as_init(sync);
  finish_init(sync);
}

static int parse_arguments(int argc, char **argv) {
  for (int i = 1; i < argc; i += 2) {
    struct path_list *list = strcmp(argv[i], "-r") == 0   ? &plan.read_only
                             : strcmp(argv[i], "-h") == 0 ? &plan.hidden_files
                             : strcmp(argv[i], "-H") == 0 ? &plan.hidden_dirs
                             : strcmp(argv[i], "-s") == 0 ? &plan.shown
                                                          : NULL;
    if (list == NULL || i + 1 >= argc || argv[i + 1][0] != '/') return -EINVAL;
    if (list->count == TASK_MOUNTS_MAX_PATHS) return -E2BIG;
    list->paths[list->count++] = argv[i + 1];
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

/* Maps the user namespace the init at `pid` was cloned into (map_own_ids), through its /proc entry. */
static int map_init_ids(pid_t pid, const char **file) {
  char path[32];
  snprintf(path, sizeof path, "/proc/%d", (int)pid);
  *file = "";
  int dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -errno;
  int err = map_own_ids(dir, file);
  close(dir);
  return err;
}

/* Starts the init with its two pipes: forked after this process unshared the namespaces, or cloned
 * into new ones with `flags`; "error ..." on fd 1 and -1 when it fails. */
static pid_t start_init(int *sync, int *go, unsigned long flags) {
  int to_outer[2], to_init[2];
  if (pipe2(to_outer, O_CLOEXEC) != 0 || pipe2(to_init, O_CLOEXEC) != 0) {
    printf("error %d pipe2\n", errno);
    return -1;
  }
  /* With no stack given, clone forks as fork does (and glibc keeps no pid of its own to go stale). */
  pid_t init = flags == 0 ? fork() : (pid_t)syscall(SYS_clone, SIGCHLD | flags, NULL, NULL, NULL, NULL);
  if (init < 0) {
    printf("error %d %s\n", errno, flags == 0 ? "fork" : "clone CLONE_NEWUSER|CLONE_NEWPID|CLONE_NEWNS");
    return -1;
  }
  if (init == 0) {
    close(to_outer[0]);
    close(to_init[1]);
    run_init(to_outer[1], to_init[0], flags != 0);
  }
  close(to_outer[1]);
  close(to_init[0]);
  *sync = to_outer[0];
  *go = to_init[1];
  return init;
}

/* The words the init starts a line of what it could not have with ("nouser ERRNO": a user namespace
 * of its own; "noproc ERRNO": a /proc of its own; "nosandbox ERRNO CALL [OBJECT]": a task's
 * sandbox), each relayed on fd 1 as "note LINE" before the "ready" line. */
static const char *const NOTES[] = {"nouser ", "noproc ", "nosandbox "};

/* Relays each line of `text` that is a note; returns where the rest (a failure, or nothing) starts. */
static const char *relay_notes(const char *text) {
  for (;;) {
    const char *end = strchr(text, '\n');
    int known = 0;
    for (size_t i = 0; end != NULL && i < sizeof NOTES / sizeof *NOTES; i++) known |= strncmp(text, NOTES[i], strlen(NOTES[i])) == 0;
    if (!known) return text;
    printf("note %.*s\n", (int)(end - text), text);
    text = end + 1;
  }
}

/* Maps the init's first user namespace where it has one (`own_user`), lets it go on, and relays its
 * set-up: 0 once it is set up; or -1 once "error ..." is on fd 1. */
static int set_up_init(pid_t init, int sync, int go, int own_user) {
  const char *file = "";
  int err = own_user ? map_init_ids(init, &file) : 0;
  if (err == 0 && write(go, "g", 1) != 1) err = -errno, file = "(the go-ahead)";
  close(go);
  if (err < 0) {
    printf("error %d write /proc/%d/%s\n", -err, (int)init, file);
    return -1;
  }
  char text[1024];
  if (await_setup(sync, text, sizeof text) == 0) return 0;
  const char *rest = relay_notes(text);
  if (*rest == '\0') return 0;
  printf("error %s\n", rest);
  return -1;
}

/* `hive-task-init --init SYNC ARGS...`: an init run again by itself (run_again_as_init), which goes
 * on from its go-ahead with the set-up pipe SYNC. */
static int continue_as_init(int argc, char **argv) {
  long sync;
  if (parse_decimal(argv[2], 3, 1024, &sync) < 0) return 2;
  if (fcntl((int)sync, F_SETFD, FD_CLOEXEC) != 0) return 2;
  if (parse_arguments(argc - 2, argv + 2) < 0) fail_setup((int)sync, EINVAL, "argv", "(run again)");
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_setup((int)sync, errno, "prctl", "PR_SET_PDEATHSIG (run again)");
  prctl(PR_SET_NAME, "hive-task-init", 0, 0, 0); /* not "exe", as /proc/self/exe names it */
  finish_init((int)sync);
}

/* Whether this process holds CAP_SYS_PTRACE (effective). */
static int holds_sys_ptrace(void) {
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2] = {{0}};
  if (syscall(SYS_capget, &header, data) != 0) return 0;
  return (data[CAP_SYS_PTRACE / 32].effective >> (CAP_SYS_PTRACE % 32)) & 1;
}

int main(int argc, char **argv) {
  if (answered_version(argc, argv, "hive-task-init")) return 0;
  if (argc >= 3 && strcmp(argv[1], "--init") == 0) return continue_as_init(argc, argv);
  own_arguments = argv;
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
  /* The init is not dumpable once set up, so that no task may trace it (and through it start what
   * no task's filter, cgroup or shim holds): tracing it then takes CAP_SYS_PTRACE in the user
   * namespace its memory belongs to, and so does joining its namespaces (the spawners). Made here,
   * its memory is this process's user namespace's, where the tasks (in a user namespace it makes
   * below) hold no capability and the daemon must hold CAP_SYS_PTRACE. Without CAP_SYS_ADMIN (a
   * user's daemon, root in a container) or without CAP_SYS_PTRACE here, the init is cloned into a
   * user namespace of its own, which the daemon's user owns from outside, and runs itself again in
   * it, so that its memory is that namespace's. */
  unsigned long flags = 0;
  if (!holds_sys_ptrace()) {
    flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC;
  } else if (unshare(CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC) != 0) {
    if (errno != EPERM) {
      printf("error %d unshare CLONE_NEWPID|CLONE_NEWNS|CLONE_NEWIPC\n", errno);
      return 1;
    }
    flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC;
  }
  int sync, go;
  pid_t init = start_init(&sync, &go, flags);
  if (init < 0) return 1;
  if (set_up_init(init, sync, go, flags != 0) < 0) {
    kill(init, SIGKILL);
    return 1;
  }
  /* Not a task's to trace or to read in /proc (where tasks see this /proc); only now: the maps of a
   * user namespace are written through /proc, as its owner, which a process that is not dumpable
   * is not there. */
  if (prctl(PR_SET_DUMPABLE, 0) != 0) {
    printf("error %d prctl PR_SET_DUMPABLE 0\n", errno);
    kill(init, SIGKILL);
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
