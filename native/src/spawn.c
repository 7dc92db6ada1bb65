#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>

#include "fdpass.h"
#include "sys.h"


/* Sources below nfds could be overwritten by an earlier dup2, and dup2 onto the same number keeps
 * FD_CLOEXEC: move such sources above the targets first. The copies are closed by the caller. */
static int lift_low_fds(const int *fds, int nfds, int *lifted, int *owned) {
  for (int i = 0; i < nfds; i++) {
    lifted[i] = fds[i];
    owned[i] = 0;
    if (fds[i] >= nfds) continue;
    lifted[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, nfds);
    if (lifted[i] < 0) return -errno;
    owned[i] = 1;
  }
  return 0;
}

static int add_stdio(posix_spawn_file_actions_t *actions, const int *fds, int nfds) {
  for (int target = 0; target < nfds; target++) {
    int err = posix_spawn_file_actions_adddup2(actions, fds[target], target);
    if (err != 0) return -err;
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  /* Nothing else reaches the child, even an fd some library opened without close-on-exec
   * (node-pty's terminal masters): a leaked master would let one task read another's terminal. */
  int err = posix_spawn_file_actions_addclosefrom_np(actions, nfds);
  if (err != 0) return -err;
#endif
  return 0;
}

static int set_session_attributes(posix_spawnattr_t *attr) {
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  int err = posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (err == 0) err = posix_spawnattr_setsigmask(attr, &none);
  if (err == 0) err = posix_spawnattr_setsigdefault(attr, &all);
  return -err;
}

static int spawn_with_fds(const char *path, char *const argv[], char *const envp[], const char *cwd,
                          const int *fds, int nfds, pid_t *pid_out, int *pidfd_out);

int spawn_session_leader(const char *path, char *const argv[], char *const envp[], const char *cwd,
                         const int *fds, int nfds, pid_t *pid_out, int *pidfd_out) {
  if (nfds > FDPASS_MAX_FDS) return -EINVAL;
  int lifted[FDPASS_MAX_FDS] = {0}, owned[FDPASS_MAX_FDS] = {0};
  int result = lift_low_fds(fds, nfds, lifted, owned);
  if (result == 0) result = spawn_with_fds(path, argv, envp, cwd, lifted, nfds, pid_out, pidfd_out);
  for (int i = 0; i < nfds; i++) {
    if (owned[i]) close(lifted[i]);
  }
  return result;
}

static int spawn_with_fds(const char *path, char *const argv[], char *const envp[], const char *cwd,
                          const int *fds, int nfds, pid_t *pid_out, int *pidfd_out) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  int err = posix_spawn_file_actions_init(&actions);
  if (err != 0) return -err;
  err = posix_spawnattr_init(&attr);
  if (err != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return -err;
  }
  int result = add_stdio(&actions, fds, nfds);
  if (result == 0 && cwd != NULL) result = -posix_spawn_file_actions_addchdir_np(&actions, cwd);
  if (result == 0) result = set_session_attributes(&attr);
  pid_t pid = -1;
  if (result == 0) result = -posix_spawn(&pid, path, &actions, &attr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (result != 0) return result;
  /* The child is ours and unreaped (libuv waits only for its own pids), so its pid cannot have
   * been reused yet: the pidfd names exactly this child. */
  int pidfd = sys_pidfd_open(pid);
  if (pidfd < 0) {
    int saved = errno;
    kill(pid, SIGKILL); /* cannot fail: the child is ours and unreaped */
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
    return -saved;
  }
  *pid_out = pid;
  *pidfd_out = pidfd;
  return 0;
}

int reap_pidfd(int pidfd, int block, int *code, int *signal) {
  siginfo_t info;
  memset(&info, 0, sizeof info);
  int flags = WEXITED | (block ? 0 : WNOHANG);
  int result;
  do result = waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, flags);
  while (result != 0 && errno == EINTR);
  if (result != 0) return -errno;
  if (info.si_pid == 0) return 0;
  if (info.si_code == CLD_EXITED) {
    *code = info.si_status;
    *signal = 0;
  } else {
    *code = -1;
    *signal = info.si_status;
  }
  return 1;
}
