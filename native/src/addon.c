/* The N-API surface: mechanical wrappers that return values or throw an Error whose `code` is the
 * errno name. Policy (which signal, when to escalate) lives in TypeScript. */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "fdpass.h"
#include "sandbox.h"
#include "sock-diag.h"
#include "spawn.h"
#include "sys.h"

#define MAX_ARG_COUNT 4096

static napi_value throw_errno(napi_env env, int err, const char *what) {
  char message[256];
  snprintf(message, sizeof message, "%s failed: %s", what, strerror(err));
  const char *name = strerrorname_np(err);
  napi_throw_error(env, name ? name : "EUNKNOWN", message);
  return NULL;
}

static napi_value make_int(napi_env env, int value) {
  napi_value result;
  napi_create_int32(env, value, &result);
  return result;
}

static int get_int(napi_env env, napi_value value, int *out) {
  return napi_get_value_int32(env, value, out) == napi_ok ? 0 : -1;
}

/* Copies a JS string into a fresh malloc'd C string (NULL on failure or if not a string). */
static char *copy_string(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char *text = malloc(length + 1);
  if (text != NULL && napi_get_value_string_utf8(env, value, text, length + 1, &length) != napi_ok) {
    free(text);
    return NULL;
  }
  return text;
}

static void free_strings(char **strings) {
  if (strings == NULL) return;
  for (char **cursor = strings; *cursor != NULL; cursor++) free(*cursor);
  free(strings);
}

/* A JS array of strings as a NULL-terminated C array. */
static char **copy_string_array(napi_env env, napi_value array) {
  uint32_t count;
  if (napi_get_array_length(env, array, &count) != napi_ok || count > MAX_ARG_COUNT * 16) return NULL;
  char **strings = calloc(count + 1, sizeof *strings);
  if (strings == NULL) return NULL;
  for (uint32_t i = 0; i < count; i++) {
    napi_value element = NULL;
    napi_get_element(env, array, i, &element);
    strings[i] = copy_string(env, element);
    if (strings[i] == NULL) {
      free_strings(strings);
      return NULL;
    }
  }
  return strings;
}

static napi_value named(napi_env env, napi_value object, const char *name) {
  napi_value value = NULL; /* stays NULL on failure: every N-API reader rejects it */
  napi_get_named_property(env, object, name, &value);
  return value;
}

struct spawn_options {
  char *path;
  char *cwd;
  char **argv;
  char **envp;
  int fds[FDPASS_MAX_FDS];
  int nfds;
};

static void free_spawn_options(struct spawn_options *options) {
  free(options->path);
  free(options->cwd);
  free_strings(options->argv);
  free_strings(options->envp);
}

/* Reads { path, argv, env, cwd, fds }; on failure throws a TypeError and returns -1 (the caller
 * still frees). */
static int read_spawn_options(napi_env env, napi_value object, struct spawn_options *options) {
  memset(options, 0, sizeof *options);
  options->path = copy_string(env, named(env, object, "path"));
  options->cwd = copy_string(env, named(env, object, "cwd"));
  options->argv = copy_string_array(env, named(env, object, "argv"));
  options->envp = copy_string_array(env, named(env, object, "env"));
  napi_value fd_array = named(env, object, "fds");
  uint32_t nfds = 0;
  if (!options->path || !options->cwd || !options->argv || !options->envp ||
      napi_get_array_length(env, fd_array, &nfds) != napi_ok || nfds > FDPASS_MAX_FDS) {
    char message[128];
    snprintf(message, sizeof message, "spawn options must be { path, argv, env, cwd, fds } with strings and at most %d fds", FDPASS_MAX_FDS);
    napi_throw_type_error(env, "EINVAL", message);
    return -1;
  }
  for (uint32_t i = 0; i < nfds; i++) {
    napi_value element = NULL;
    napi_get_element(env, fd_array, i, &element);
    if (get_int(env, element, &options->fds[i]) != 0) {
      napi_throw_type_error(env, "EINVAL", "spawn options: fds must be integers");
      return -1;
    }
  }
  options->nfds = (int)nfds;
  return 0;
}

/* spawn({ path, argv, env, cwd, fds }) -> { pid, pidfd } */
static napi_value js_spawn(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value object;
  napi_get_cb_info(env, info, &argc, &object, NULL, NULL);
  struct spawn_options options;
  napi_value result = NULL;
  if (read_spawn_options(env, object, &options) == 0) {
    pid_t pid;
    int pidfd;
    int err = spawn_session_leader(options.path, options.argv, options.envp, options.cwd, options.fds, options.nfds, &pid, &pidfd);
    if (err < 0) {
      throw_errno(env, -err, "posix_spawn");
    } else {
      napi_create_object(env, &result);
      napi_set_named_property(env, result, "pid", make_int(env, pid));
      napi_set_named_property(env, result, "pidfd", make_int(env, pidfd));
    }
  }
  free_spawn_options(&options);
  return result;
}

/* Packs "cwd\0path\0argc\0argv...\0env...\0" for the spawner; NULL when out of memory. */
static char *pack_request(const char *cwd, const char *path, char **argv, char **envp, size_t *length) {
  char argc_text[24];
  size_t argc = 0;
  while (argv[argc] != NULL) argc++;
  snprintf(argc_text, sizeof argc_text, "%zu", argc);
  size_t total = strlen(cwd) + strlen(path) + strlen(argc_text) + 3;
  for (char **cursor = argv; *cursor; cursor++) total += strlen(*cursor) + 1;
  for (char **cursor = envp; *cursor; cursor++) total += strlen(*cursor) + 1;
  char *data = malloc(total), *out = data;
  if (data == NULL) return NULL;
  const char *head[] = {cwd, path, argc_text};
  for (size_t i = 0; i < 3; i++) out = stpcpy(out, head[i]) + 1;
  for (char **cursor = argv; *cursor; cursor++) out = stpcpy(out, *cursor) + 1;
  for (char **cursor = envp; *cursor; cursor++) out = stpcpy(out, *cursor) + 1;
  *length = total;
  return data;
}

/* spawnRequest(socket, { path, argv, env, cwd, fds }): sends one spawn request to the spawner on
 * `socket` (blocking, as the socket is). The fds travel with it, so the caller may close its copies
 * at once. The answer, "ERRNO PID", comes on the spawner's answer socket, which the caller reads. */
static napi_value js_spawn_request(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  int socket;
  if (argc < 2 || get_int(env, args[0], &socket) != 0) return throw_errno(env, EINVAL, "spawnRequest");
  struct spawn_options options;
  if (read_spawn_options(env, args[1], &options) == 0) {
    size_t length;
    char *request = pack_request(options.cwd, options.path, options.argv, options.envp, &length);
    int err = request == NULL ? -ENOMEM : send_frame(socket, request, length, options.fds, options.nfds);
    free(request);
    if (err < 0) throw_errno(env, -err, "sending a spawn request to hive-task-spawner");
  }
  free_spawn_options(&options);
  return NULL;
}

/* socketPair() -> [a, b]: a connected unix stream pair, both close-on-exec */
static napi_value js_socket_pair(napi_env env, napi_callback_info info) {
  (void)info;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return throw_errno(env, errno, "socketpair");
  napi_value result;
  napi_create_array_with_length(env, 2, &result);
  napi_set_element(env, result, 0, make_int(env, fds[0]));
  napi_set_element(env, result, 1, make_int(env, fds[1]));
  return result;
}

static int get_int_args(napi_env env, napi_callback_info info, int *values, size_t wanted) {
  napi_value args[2];
  size_t argc = 2;
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < wanted) return -1;
  for (size_t i = 0; i < wanted; i++) {
    if (get_int(env, args[i], &values[i]) != 0) return -1;
  }
  return 0;
}

/* pipe() -> [readFd, writeFd], both close-on-exec */
static napi_value js_pipe(napi_env env, napi_callback_info info) {
  (void)info;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return throw_errno(env, errno, "pipe2");
  napi_value result;
  napi_create_array_with_length(env, 2, &result);
  napi_set_element(env, result, 0, make_int(env, fds[0]));
  napi_set_element(env, result, 1, make_int(env, fds[1]));
  return result;
}

/* textFd(text): a close-on-exec memfd holding `text` (UTF-8, NUL characters too), read from its
 * start. A reader gets all of it at once, whatever its size, and nothing waits on a writer as
 * with a pipe. */
static napi_value js_text_fd(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1) return throw_errno(env, EINVAL, "textFd");
  size_t length = 0, written = 0;
  char *text = copy_string(env, argv[0]);
  if (text == NULL || napi_get_value_string_utf8(env, argv[0], NULL, 0, &length) != napi_ok) {
    free(text);
    return throw_errno(env, EINVAL, "textFd");
  }
  int fd = memfd_create("hive-task-command", MFD_CLOEXEC), err = fd < 0 ? errno : 0;
  while (err == 0 && written < length) {
    ssize_t step = write(fd, text + written, length - written);
    if (step < 0 && errno != EINTR) err = errno;
    if (step > 0) written += (size_t)step;
  }
  if (err == 0 && lseek(fd, 0, SEEK_SET) != 0) err = errno;
  free(text);
  if (err != 0) {
    if (fd >= 0) close(fd);
    return throw_errno(env, err, fd < 0 ? "memfd_create" : "write memfd");
  }
  return make_int(env, fd);
}

/* landlockAbi(): the Landlock ABI version this kernel offers, or 0 where it offers none. */
static napi_value js_landlock_abi(napi_env env, napi_callback_info info) {
  (void)info;
  int abi = landlock_abi();
  return make_int(env, abi < 0 ? 0 : abi);
}

/* sandboxKernelGap(): what this kernel lacks of the sandbox's calls, in words, or null. */
static napi_value js_sandbox_kernel_gap(napi_env env, napi_callback_info info) {
  (void)info;
  const char *gap = sandbox_kernel_gap();
  napi_value result;
  if (gap == NULL) napi_get_null(env, &result);
  else napi_create_string_utf8(env, gap, NAPI_AUTO_LENGTH, &result);
  return result;
}

/* kernelMountOf(path) -> { point, type } of the deepest kernel interface mount that holds `path`
 * (absolute, resolved), or null. */
static napi_value js_kernel_mount_of(napi_env env, napi_callback_info info) {
  size_t argc = 1, length = 0;
  napi_value argv[1], result, value;
  char path[PATH_MAX], point[PATH_MAX], type[64];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_string_utf8(env, argv[0], path, sizeof path, &length) != napi_ok || length >= sizeof path - 1)
    return throw_errno(env, EINVAL, "kernelMountOf");
  int found = kernel_mount_of(path, point, sizeof point, type, sizeof type);
  if (found < 0) return throw_errno(env, -found, "read /proc/self/mountinfo");
  if (found == 0) {
    napi_get_null(env, &result);
    return result;
  }
  napi_create_object(env, &result);
  napi_create_string_utf8(env, point, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, result, "point", value);
  napi_create_string_utf8(env, type, NAPI_AUTO_LENGTH, &value);
  napi_set_named_property(env, result, "type", value);
  return result;
}

/* openDetachedTerminal(cols, rows) -> { mountFd, masterFd, number }: a terminal in a devpts
 * instance of its own, mounted nowhere yet (a sandboxed task's leader attaches it). */
static napi_value js_open_detached_terminal(napi_env env, napi_callback_info info) {
  int size[2], mount_fd, master_fd, number;
  const char *call;
  if (get_int_args(env, info, size, 2) != 0) return throw_errno(env, EINVAL, "openDetachedTerminal");
  int err = open_detached_terminal(size[0], size[1], &mount_fd, &master_fd, &number, &call);
  if (err < 0) return throw_errno(env, -err, call);
  napi_value result;
  napi_create_object(env, &result);
  napi_set_named_property(env, result, "mountFd", make_int(env, mount_fd));
  napi_set_named_property(env, result, "masterFd", make_int(env, master_fd));
  napi_set_named_property(env, result, "number", make_int(env, number));
  return result;
}

/* close(fd) */
/* tcpSocket(local, localPort, remote, remotePort) -> { inode, cgroupId, uid, state } of the TCP
 * socket of this network namespace with those ends (Buffers of 4 bytes for IPv4, 16 for IPv6): inode
 * 0 for one in TIME_WAIT or orphaned, cgroupId (a BigInt) 0 where the kernel does not say, uid its
 * maker's, state the kernel's TCP state (1: established); null for none. */
static napi_value js_tcp_socket(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  uint8_t *addresses[2];
  size_t lengths[2];
  int ports[2];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4 ||
      napi_get_buffer_info(env, argv[0], (void **)&addresses[0], &lengths[0]) != napi_ok ||
      napi_get_buffer_info(env, argv[2], (void **)&addresses[1], &lengths[1]) != napi_ok ||
      get_int(env, argv[1], &ports[0]) != 0 || get_int(env, argv[3], &ports[1]) != 0 ||
      lengths[0] != lengths[1] || (lengths[0] != 4 && lengths[0] != 16))
    return throw_errno(env, EINVAL, "tcpSocket");
  struct tcp_socket_info found = {0, 0, 0, 0};
  int err = find_tcp_socket(lengths[0] == 16, addresses[0], ports[0], addresses[1], ports[1], &found);
  napi_value result, inode, cgroup, uid;
  if (err == -ENOENT) napi_get_null(env, &result);
  else if (err < 0) return throw_errno(env, -err, "sock_diag");
  else {
    napi_create_object(env, &result);
    napi_create_double(env, (double)found.inode, &inode);
    napi_create_bigint_uint64(env, found.cgroup_id, &cgroup);
    napi_set_named_property(env, result, "inode", inode);
    napi_set_named_property(env, result, "cgroupId", cgroup);
    napi_create_uint32(env, found.uid, &uid);
    napi_set_named_property(env, result, "uid", uid);
    napi_set_named_property(env, result, "state", make_int(env, found.state));
  }
  return result;
}

static napi_value js_close(napi_env env, napi_callback_info info) {
  int fd;
  if (get_int_args(env, info, &fd, 1) != 0) return throw_errno(env, EINVAL, "close");
  if (close(fd) != 0 && errno != EINTR) return throw_errno(env, errno, "close");
  return NULL;
}

/* setCloseOnExec(fd): for fds opened by code that does not set it (node-pty's openpty). */
static napi_value js_set_close_on_exec(napi_env env, napi_callback_info info) {
  int fd;
  if (get_int_args(env, info, &fd, 1) != 0) return throw_errno(env, EINVAL, "fcntl");
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0) return throw_errno(env, errno, "fcntl(F_GETFD)");
  if (fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) return throw_errno(env, errno, "fcntl(F_SETFD)");
  return NULL;
}

/* lineMode(fd) -> whether the terminal at fd is in canonical (line by line) mode, where Ctrl-D is end of file. */
static napi_value js_line_mode(napi_env env, napi_callback_info info) {
  int fd;
  if (get_int_args(env, info, &fd, 1) != 0) return throw_errno(env, EINVAL, "tcgetattr");
  struct termios modes;
  if (tcgetattr(fd, &modes) != 0) return throw_errno(env, errno, "tcgetattr");
  napi_value result;
  napi_get_boolean(env, (modes.c_lflag & ICANON) != 0, &result);
  return result;
}

/* reap(pidfd, block) -> null while it runs, else { code, signal } (code -1 when a signal ended it).
 * Block only for a process known to be exiting: it holds the calling thread. */
static napi_value js_reap(napi_env env, napi_callback_info info) {
  int values[2], code, signal;
  if (get_int_args(env, info, values, 2) != 0) return throw_errno(env, EINVAL, "reap");
  int state = reap_pidfd(values[0], values[1], &code, &signal);
  if (state < 0) return throw_errno(env, -state, "waitid(P_PIDFD)");
  napi_value result;
  if (state == 0) {
    napi_get_null(env, &result);
    return result;
  }
  napi_create_object(env, &result);
  napi_set_named_property(env, result, "code", make_int(env, code));
  napi_set_named_property(env, result, "signal", make_int(env, signal));
  return result;
}

/* pidfdOpen(pid) -> fd */
static napi_value js_pidfd_open(napi_env env, napi_callback_info info) {
  int pid;
  if (get_int_args(env, info, &pid, 1) != 0) return throw_errno(env, EINVAL, "pidfd_open");
  int fd = sys_pidfd_open(pid);
  if (fd < 0) return throw_errno(env, errno, "pidfd_open");
  return make_int(env, fd);
}

/* sendSignal(pidfd, signal) -> true, or false when the process is gone */
static napi_value js_send_signal(napi_env env, napi_callback_info info) {
  int values[2];
  if (get_int_args(env, info, values, 2) != 0) return throw_errno(env, EINVAL, "pidfd_send_signal");
  napi_value result;
  if (sys_pidfd_send_signal(values[0], values[1]) != 0) {
    if (errno != ESRCH) return throw_errno(env, errno, "pidfd_send_signal");
    napi_get_boolean(env, false, &result);
    return result;
  }
  napi_get_boolean(env, true, &result);
  return result;
}

/* How long a thread's end waits for a child it killed to exit, so that it can reap it. */
#define THREAD_END_REAP_MS 1000

/* The cleanup of a thread's Node environment (an idle worker thread stopped, a thread that died,
 * the daemon's stop) for a child bound to it: killed and reaped through its pidfd, which is then
 * closed. Its PR_SET_PDEATHSIG would kill it a moment later anyway, but nothing would reap it: it
 * would stay a zombie of the daemon, which must never waitpid(-1) (libuv reaps only what it spawned). */
static void reap_at_thread_end(void *arg) {
  int pidfd = (int)(intptr_t)arg;
  int code, signal, ready;
  sys_pidfd_send_signal(pidfd, SIGKILL);
  struct pollfd exited = {.fd = pidfd, .events = POLLIN};
  do ready = poll(&exited, 1, THREAD_END_REAP_MS);
  while (ready < 0 && errno == EINTR);
  if (ready == 1) reap_pidfd(pidfd, 0, &code, &signal);
  close(pidfd);
}

/* reapAtThreadEnd(pidfd, bound): with bound true, the child behind `pidfd` (one of this process's,
 * unreaped) is killed and reaped, and `pidfd` closed, when the calling thread's environment ends;
 * false undoes that, before the caller reaps it and closes `pidfd` itself. */
static napi_value js_reap_at_thread_end(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value args[2];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  int pidfd;
  bool bound;
  if (argc < 2 || get_int(env, args[0], &pidfd) != 0 || pidfd < 0 || napi_get_value_bool(env, args[1], &bound) != napi_ok)
    return throw_errno(env, EINVAL, "reapAtThreadEnd");
  void *arg = (void *)(intptr_t)pidfd;
  napi_status status = bound ? napi_add_env_cleanup_hook(env, reap_at_thread_end, arg) : napi_remove_env_cleanup_hook(env, reap_at_thread_end, arg);
  if (status != napi_ok) return throw_errno(env, EINVAL, bound ? "napi_add_env_cleanup_hook" : "napi_remove_env_cleanup_hook");
  return NULL;
}

/* exec(path, argv, env, fds): replaces this process (every thread of it) with `path`, with fds 0
 * to 2 and each of `fds` kept open across it (Node opens its stdio close-on-exec); returns only by
 * throwing, when execve fails. */
static napi_value js_exec(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value args[4];
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  uint32_t kept = 0;
  if (argc < 4 || napi_get_array_length(env, args[3], &kept) != napi_ok) return throw_errno(env, EINVAL, "exec");
  for (int fd = 0; fd <= 2; fd++) fcntl(fd, F_SETFD, 0);
  for (uint32_t i = 0; i < kept; i++) {
    napi_value element = NULL;
    int fd;
    napi_get_element(env, args[3], i, &element);
    if (get_int(env, element, &fd) != 0 || fcntl(fd, F_SETFD, 0) != 0) return throw_errno(env, EBADF, "exec: keep an fd open");
  }
  char *path = copy_string(env, args[0]);
  char **argv = path == NULL ? NULL : copy_string_array(env, args[1]);
  char **envp = argv == NULL ? NULL : copy_string_array(env, args[2]);
  int err = envp == NULL ? EINVAL : (execve(path, argv, envp), errno);
  free(path);
  free_strings(argv);
  free_strings(envp);
  return throw_errno(env, err, "execve");
}

/* setDumpable(on): whether other processes of this user may trace this one and read or write its
 * memory and files in /proc (PR_SET_DUMPABLE). */
static napi_value js_set_dumpable(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value args[1];
  bool on;
  napi_get_cb_info(env, info, &argc, args, NULL, NULL);
  if (argc < 1 || napi_get_value_bool(env, args[0], &on) != napi_ok) return throw_errno(env, EINVAL, "setDumpable");
  if (prctl(PR_SET_DUMPABLE, on ? 1 : 0, 0, 0, 0) != 0) return throw_errno(env, errno, "prctl PR_SET_DUMPABLE");
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor properties[] = {
      {"spawn", NULL, js_spawn, NULL, NULL, NULL, napi_default, NULL},
      {"spawnRequest", NULL, js_spawn_request, NULL, NULL, NULL, napi_default, NULL},
      {"socketPair", NULL, js_socket_pair, NULL, NULL, NULL, napi_default, NULL},
      {"pipe", NULL, js_pipe, NULL, NULL, NULL, napi_default, NULL},
      {"textFd", NULL, js_text_fd, NULL, NULL, NULL, napi_default, NULL},
      {"landlockAbi", NULL, js_landlock_abi, NULL, NULL, NULL, napi_default, NULL},
      {"sandboxKernelGap", NULL, js_sandbox_kernel_gap, NULL, NULL, NULL, napi_default, NULL},
      {"kernelMountOf", NULL, js_kernel_mount_of, NULL, NULL, NULL, napi_default, NULL},
      {"openDetachedTerminal", NULL, js_open_detached_terminal, NULL, NULL, NULL, napi_default, NULL},
      {"tcpSocket", NULL, js_tcp_socket, NULL, NULL, NULL, napi_default, NULL},
      {"close", NULL, js_close, NULL, NULL, NULL, napi_default, NULL},
      {"setCloseOnExec", NULL, js_set_close_on_exec, NULL, NULL, NULL, napi_default, NULL},
      {"lineMode", NULL, js_line_mode, NULL, NULL, NULL, napi_default, NULL},
      {"reap", NULL, js_reap, NULL, NULL, NULL, napi_default, NULL},
      {"pidfdOpen", NULL, js_pidfd_open, NULL, NULL, NULL, napi_default, NULL},
      {"sendSignal", NULL, js_send_signal, NULL, NULL, NULL, napi_default, NULL},
      {"reapAtThreadEnd", NULL, js_reap_at_thread_end, NULL, NULL, NULL, napi_default, NULL},
      {"exec", NULL, js_exec, NULL, NULL, NULL, napi_default, NULL},
      {"setDumpable", NULL, js_set_dumpable, NULL, NULL, NULL, napi_default, NULL},
  };
  napi_define_properties(env, exports, sizeof properties / sizeof properties[0], properties);
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
