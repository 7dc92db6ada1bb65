/* hive-task-init: makes the namespaces that every task runs in, and is their init.
 *
 *   hive-task-init [-r DIR]... [-h FILE]... [-H DIR]...
 *
 * Started once by the daemon's main thread. It unshares a PID and a mount namespace and forks
 * their first process, the init (pid 1 inside), which
 *   - makes every mount a slave of the host's (the host's later mounts still show inside; nothing
 *     mounted inside shows outside);
 *   - mounts a /proc of its own namespace, so that ps, pgrep, pkill, killall and kill -1 in a task
 *     see and reach the tasks' processes only, never the daemon or its spawners; what of it changes
 *     the whole host (/proc/sys, /proc/sysrq-trigger, ...) read-only;
 *   - binds each -r DIR onto itself read-only (the daemon's state dir: tasks read their output and
 *     change nothing there), /dev/null over each -h FILE, and an empty read-only tmpfs over each
 *     -H DIR (the folders of the daemon's token, policy file and harness socket: what is renamed
 *     into a hidden folder stays hidden, where a bind over a file goes with the file it covered);
 *   - moves into a user namespace of its own, which this process maps to the ids of its own (the
 *     same ids inside and out), and then into a mount namespace of its own, a copy of the one set
 *     up above that this user namespace owns: the kernel locks every mount so copied, so that no
 *     task, root inside or not, can unmount or remount what hides or guards the daemon's files;
 *   - reaps every orphan that comes to it, for good.
 * Once the init is set up, this process writes "ready PID" (the init's pid outside) on fd 1, or
 * "ready PID unlocked ERRNO" when the kernel refused the user namespace (the mounts are then made,
 * but a task that is root can undo them); or "error ERRNO CALL" when a step failed, and exits 1.
 * The daemon's spawners join the namespaces through a pidfd of the init (setns), so every shim
 * they fork, and every task, runs inside.
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

#define USAGE "usage: hive-task-init [-r DIR]... [-h FILE]... [-H DIR]...\n"
#define MAX_PATHS 16

/* The paths given with one option, in their order. */
struct path_list {
  const char *paths[MAX_PATHS];
  int count;
};
static struct path_list read_only_dirs, hidden_files, hidden_dirs;

/* In the init: "ERRNO CALL" on `sync`, then exit. */
static void fail_setup(int sync, int err, const char *call, const char *object) __attribute__((noreturn));
static void fail_setup(int sync, int err, const char *call, const char *object) {
  dprintf(sync, "%d %s %s", err, call, object);
  _exit(1);
}

/* What of /proc changes the whole host, read-only as container runtimes mount it: sysctls (a
 * core_pattern of `|PROGRAM` is run by the kernel as root on the host), the magic SysRq keys, IRQ
 * affinities, bus devices. */
static const char *const READ_ONLY_PROC[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"};

/* An empty read-only folder over `dir`: nothing in it, nor renamed into it, shows inside. */
#define HIDDEN_DIR_OPTIONS "mode=0555,size=4k"

static void set_up_mounts(int sync) {
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) != 0) fail_setup(sync, errno, "mount --make-rslave", "/");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) fail_setup(sync, errno, "mount proc", "/proc");
  for (size_t i = 0; i < sizeof READ_ONLY_PROC / sizeof *READ_ONLY_PROC; i++) {
    const char *path = READ_ONLY_PROC[i];
    if (mount(path, path, NULL, MS_BIND, NULL) != 0) {
      if (errno == ENOENT) continue; /* not in this kernel */
      fail_setup(sync, errno, "mount --bind", path);
    }
    if (mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) fail_setup(sync, errno, "mount -o remount,bind,ro", path);
  }
  for (int i = 0; i < read_only_dirs.count; i++) {
    const char *dir = read_only_dirs.paths[i];
    if (mount(dir, dir, NULL, MS_BIND | MS_REC, NULL) != 0) fail_setup(sync, errno, "mount --rbind", dir);
    if (mount(NULL, dir, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY, NULL) != 0) fail_setup(sync, errno, "mount -o remount,bind,ro", dir);
  }
  for (int i = 0; i < hidden_files.count; i++) {
    if (mount("/dev/null", hidden_files.paths[i], NULL, MS_BIND, NULL) != 0) fail_setup(sync, errno, "mount --bind /dev/null", hidden_files.paths[i]);
  }
  for (int i = 0; i < hidden_dirs.count; i++) {
    unsigned long flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    if (mount("tmpfs", hidden_dirs.paths[i], "tmpfs", flags, HIDDEN_DIR_OPTIONS) != 0) fail_setup(sync, errno, "mount tmpfs -o ro", hidden_dirs.paths[i]);
  }
}

/* In the init: a user namespace of its own, mapped by this process's parent once asked on `sync`
 * ("user\n", answered with a byte on `go`), then a mount namespace that it owns: a copy of the one
 * set up, in which the kernel locks every mount. Where the kernel refuses the user namespace, says
 * "nouser ERRNO\n" and goes on without: the mounts stay as they are, and unlocked. */
static void lock_mounts(int sync, int go) {
  if (unshare(CLONE_NEWUSER) != 0) {
    dprintf(sync, "nouser %d\n", errno);
    return;
  }
  char mapped;
  dprintf(sync, "user\n");
  if (read(go, &mapped, 1) != 1) fail_setup(sync, EPIPE, "read", "the map of its user namespace");
  if (unshare(CLONE_NEWNS) != 0) fail_setup(sync, errno, "unshare", "CLONE_NEWNS (in its user namespace)");
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

static void run_init(int sync, int go) __attribute__((noreturn));
static void run_init(int sync, int go) {
  /* Blocked, not ignored: SIGCHLD stays pending for sigwaitinfo, and the rest wait unseen. */
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, NULL);
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail_setup(sync, errno, "prctl", "PR_SET_PDEATHSIG");
  prctl(PR_SET_NAME, "hive-task-init", 0, 0, 0);
  set_up_mounts(sync);
  lock_mounts(sync, go);
  close(go);
  if (chdir("/") != 0) fail_setup(sync, errno, "chdir", "/");
  /* Only the outer process holds the daemon's pipe, so that it reads EOF when that one ends. */
  if (dup2(0, 1) < 0) fail_setup(sync, errno, "dup2", "fd 0 to 1");
  close(sync); /* EOF: set up */
  reap_forever();
}

static int parse_arguments(int argc, char **argv) {
  for (int i = 1; i < argc; i += 2) {
    struct path_list *list = strcmp(argv[i], "-r") == 0   ? &read_only_dirs
                             : strcmp(argv[i], "-h") == 0 ? &hidden_files
                             : strcmp(argv[i], "-H") == 0 ? &hidden_dirs
                                                          : NULL;
    if (list == NULL || i + 1 >= argc || argv[i + 1][0] != '/') return -EINVAL;
    if (list->count == MAX_PATHS) return -E2BIG;
    list->paths[list->count++] = argv[i + 1];
  }
  return 0;
}

/* Reads from `sync` up to a newline (kept out) or its end, at most `size` - 1 bytes: the init's
 * first word, or what it said when it failed before it. */
static void read_line(int sync, char *text, size_t size) {
  size_t used = 0;
  while (used < size - 1) {
    ssize_t got = read(sync, text + used, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0 || text[used] == '\n') break;
    used++;
  }
  text[used] = '\0';
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

/* The host's /proc, opened before the init mounts its own over it in the namespace this process shares. */
static int host_proc = -1;

/* Writes to /proc/PID/FILE (uid_map or gid_map) the ranges of this process's own map, each as the
 * same ids inside and out: root is root inside, and a file's owner is the same on both sides. */
static int write_identity_map(pid_t pid, const char *file) {
  char path[64], own[4096], map[4096];
  snprintf(path, sizeof path, "self/%s", file);
  int fd = openat(host_proc, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  ssize_t length = read(fd, own, sizeof own - 1);
  int err = length < 0 ? -errno : 0;
  close(fd);
  if (err < 0) return err;
  own[length] = '\0';
  size_t used = 0;
  unsigned long inside, outside, count;
  for (char *line = own; line != NULL && sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3; line = strchr(line + 1, '\n')) {
    int wrote = snprintf(map + used, sizeof map - used, "%lu %lu %lu\n", inside, inside, count);
    if (wrote < 0 || (size_t)wrote >= sizeof map - used) return -E2BIG;
    used += (size_t)wrote;
  }
  snprintf(path, sizeof path, "%d/%s", (int)pid, file);
  fd = openat(host_proc, path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
  err = write(fd, map, used) == (ssize_t)used ? 0 : -errno;
  close(fd);
  return err;
}

/* Answers the init's first word: "user" is mapped (0, or -errno with `*file` the map that failed);
 * "nouser ERRNO" leaves `*unlocked` that errno. Anything else is the init's failure: -1. */
static int answer_init(pid_t init, const char *word, int go, int *unlocked, const char **file) {
  if (sscanf(word, "nouser %d", unlocked) == 1) return 0;
  if (strcmp(word, "user") != 0) return -1;
  *file = "uid_map";
  int err = write_identity_map(init, *file);
  if (err == 0) err = write_identity_map(init, *file = "gid_map");
  if (err == 0 && write(go, "m", 1) != 1) err = -errno;
  return err;
}

/* Forks the init with its two pipes; "error ..." on fd 1 and -1 when it fails. */
static pid_t start_init(int *sync, int *go) {
  int to_outer[2], to_init[2];
  if (pipe2(to_outer, O_CLOEXEC) != 0 || pipe2(to_init, O_CLOEXEC) != 0) {
    printf("error %d pipe2\n", errno);
    return -1;
  }
  pid_t init = fork();
  if (init < 0) {
    printf("error %d fork\n", errno);
    return -1;
  }
  if (init == 0) {
    close(to_outer[0]);
    close(to_init[1]);
    run_init(to_outer[1], to_init[0]);
  }
  close(to_outer[1]);
  close(to_init[0]);
  *sync = to_outer[0];
  *go = to_init[1];
  return init;
}

/* Sees the init through its set-up: 0, with `*unlocked` the errno of a refused user namespace
 * (or 0); or -1 once "error ..." is on fd 1. */
static int set_up_init(pid_t init, int sync, int go, int *unlocked) {
  char text[512];
  const char *file = "";
  read_line(sync, text, sizeof text);
  int err = answer_init(init, text, go, unlocked, &file);
  close(go);
  if (err < -1) {
    printf("error %d write /proc/%d/%s\n", -err, (int)init, file);
    return -1;
  }
  if (err == -1 || await_setup(sync, text, sizeof text) < 0) {
    printf("error %s\n", text[0] != '\0' ? text : "the init exited as it started");
    return -1;
  }
  return 0;
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
  host_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (host_proc < 0) {
    printf("error %d open /proc\n", errno);
    return 1;
  }
  if (unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) {
    printf("error %d unshare CLONE_NEWPID|CLONE_NEWNS\n", errno);
    return 1;
  }
  int sync, go, unlocked = 0;
  pid_t init = start_init(&sync, &go);
  if (init < 0) return 1;
  if (set_up_init(init, sync, go, &unlocked) < 0) {
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
  if (unlocked != 0) printf("ready %d unlocked %d\n", (int)init, unlocked);
  else printf("ready %d\n", (int)init);
  fflush(stdout);
  int status;
  while (waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  if (stopping) return 0;
  dprintf(2, "hive-task-init: the init (pid %d) ended (%s %d): every task in its namespace ended with it\n", (int)init,
          WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  return 1;
}
