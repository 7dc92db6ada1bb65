/* What a sandboxed task may still do as root (sandbox.h): the capabilities it keeps, no_new_privs,
 * and a seccomp filter that refuses typing into a terminal, the keyrings, io_uring and new user
 * namespaces, and in the no-namespace sandbox every socket but a unix one. Also what of the sandbox's calls this kernel lacks. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sys.h"

/* Docker's default set without CAP_MKNOD (device nodes), CAP_NET_RAW (raw sockets read and forge
 * the host's traffic, this daemon's token on loopback included) and CAP_SETFCAP (file
 * capabilities; without it a user namespace cannot map root either). docs/sandbox-and-policy.md
 * says why every other one goes. */
static const int KEPT_CAPABILITIES[] = {CAP_CHOWN,  CAP_DAC_OVERRIDE, CAP_FOWNER,           CAP_FSETID,      CAP_KILL,       CAP_SETGID,
                                        CAP_SETUID, CAP_SETPCAP,      CAP_NET_BIND_SERVICE, CAP_SYS_CHROOT, CAP_AUDIT_WRITE};

static uint64_t kept_capabilities(void) {
  uint64_t mask = 0;
  for (size_t i = 0; i < sizeof KEPT_CAPABILITIES / sizeof *KEPT_CAPABILITIES; i++) mask |= 1ULL << KEPT_CAPABILITIES[i];
  return mask;
}

int drop_capabilities(const char **call) {
  uint64_t kept = kept_capabilities();
  /* PR_CAPBSET_READ fails (EINVAL) past the last capability this kernel knows. */
  for (int cap = 0; cap < 64 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
    *call = "prctl PR_CAPBSET_DROP";
    if (!((kept >> cap) & 1) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return -errno;
  }
  *call = "prctl PR_CAP_AMBIENT_CLEAR_ALL";
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return -errno;
  struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct sets[2];
  *call = "capget";
  if (syscall(SYS_capget, &header, sets) != 0) return -errno;
  for (int word = 0; word < 2; word++) {
    uint32_t keep = (uint32_t)(kept >> (32 * word));
    sets[word].effective &= keep;
    sets[word].permitted &= keep;
    sets[word].inheritable &= keep;
  }
  *call = "capset";
  return syscall(SYS_capset, &header, sets) == 0 ? 0 : -errno;
}

int set_no_new_privs(const char **call) {
  *call = "prctl PR_SET_NO_NEW_PRIVS";
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : -errno;
}

/* The system calls the filter refuses, by their numbers in one architecture. */
struct call_numbers {
  uint32_t arch;
  uint32_t ignored_bits; /* cleared from a call's number before it is compared */
  uint32_t ioctl[2];     /* x32's ioctl has a number of its own */
  uint32_t keyrings[3];  /* add_key, request_key, keyctl */
  uint32_t io_uring[3];  /* io_uring_setup, io_uring_enter, io_uring_register */
  uint32_t unshare, clone, clone3;
  uint32_t socket, socketcall; /* socketcall: NO_CALL where the architecture has none */
};
#define NO_CALL 0xffffffffU

/* Every architecture whose system calls a process here can make: a filter that looked at the
 * native one alone would let a 32-bit call through (int 0x80 works from 64-bit code). */
#if defined(__x86_64__) || defined(__aarch64__)
#define HAS_CALL_FILTER 1
static const struct call_numbers ARCHITECTURES[] = {
#if defined(__x86_64__)
    {AUDIT_ARCH_X86_64, 0x40000000 /* x32's calls, under the same architecture */, {16, 514}, {248, 249, 250}, {425, 426, 427}, 272, 56, 435, 41, NO_CALL},
    {AUDIT_ARCH_I386, 0, {54, 54}, {286, 287, 288}, {425, 426, 427}, 310, 120, 435, 359, 102},
#elif defined(__aarch64__)
    {AUDIT_ARCH_AARCH64, 0, {29, 29}, {217, 218, 219}, {425, 426, 427}, 97, 220, 435, 198, NO_CALL},
    {AUDIT_ARCH_ARM, 0, {54, 54}, {309, 310, 311}, {425, 426, 427}, 337, 120, 435, 281, 102},
#endif
};
#define ARCHITECTURE_COUNT (sizeof ARCHITECTURES / sizeof *ARCHITECTURES)

/* The low 32 bits of a system call's argument (ioctl's request is an unsigned int; clone's and
 * unshare's flags that matter are there too). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARGUMENT_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARGUMENT_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

#define LOAD(offset) (struct sock_filter) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (offset))
#define RETURN(value) (struct sock_filter) BPF_STMT(BPF_RET | BPF_K, (value))
#define JUMP_IF(test, value, if_true, if_false) (struct sock_filter) BPF_JUMP(BPF_JMP | (test) | BPF_K, (value), (if_true), (if_false))
#define REFUSE(error) RETURN(SECCOMP_RET_ERRNO | (error))

/* A filter program as it is written: jumps count the instructions they skip, and each block below
 * ends in a return, so none needs a label. */
struct program {
  struct sock_filter code[160];
  unsigned short length;
};

static void emit(struct program *program, struct sock_filter instruction) { program->code[program->length++] = instruction; }

/* With the call's number loaded: `number` fails with `error`. */
static void refuse_call(struct program *program, uint32_t number, int error) {
  emit(program, JUMP_IF(BPF_JEQ, number, 0, 1));
  emit(program, REFUSE(error));
}

/* With the call's number loaded: `number` fails with EPERM when any of `flags` is set in its
 * first argument, and runs otherwise. */
static void refuse_flags(struct program *program, uint32_t number, uint32_t flags) {
  emit(program, JUMP_IF(BPF_JEQ, number, 0, 4));
  emit(program, LOAD(ARGUMENT_LOW(0)));
  emit(program, JUMP_IF(BPF_JSET, flags, 0, 1));
  emit(program, REFUSE(EPERM));
  emit(program, RETURN(SECCOMP_RET_ALLOW));
}

/* With the call's number loaded: ioctl TIOCSTI and TIOCLINUX fail with EPERM, every other request runs. */
static void refuse_terminal_injection(struct program *program, const uint32_t ioctl[2]) {
  emit(program, JUMP_IF(BPF_JEQ, ioctl[0], 1, 0));
  emit(program, JUMP_IF(BPF_JEQ, ioctl[1], 0, 5));
  emit(program, LOAD(ARGUMENT_LOW(1)));
  emit(program, JUMP_IF(BPF_JEQ, TIOCSTI, 2, 0));
  emit(program, JUMP_IF(BPF_JEQ, TIOCLINUX, 1, 0));
  emit(program, RETURN(SECCOMP_RET_ALLOW));
  emit(program, REFUSE(EPERM));
}

/* With the call's number loaded: socket fails with EACCES for every domain but AF_UNIX, and
 * socketcall (whose arguments are behind a pointer) with ENOSYS. */
static void refuse_network(struct program *program, const struct call_numbers *numbers) {
  if (numbers->socketcall != NO_CALL) refuse_call(program, numbers->socketcall, ENOSYS);
  emit(program, JUMP_IF(BPF_JEQ, numbers->socket, 0, 4));
  emit(program, LOAD(ARGUMENT_LOW(0)));
  emit(program, JUMP_IF(BPF_JEQ, AF_UNIX, 0, 1));
  emit(program, RETURN(SECCOMP_RET_ALLOW));
  emit(program, REFUSE(EACCES));
}

/* What a filter refuses: what every task gets (clone3, a cgroup namespace), a sandbox's calls, or
 * those and the network too. */
enum filter_kind { CGROUP_ESCAPES, SANDBOX, SANDBOX_WITHOUT_NETWORK };

/* The checks for calls of one architecture, skipped by calls of any other. */
static void emit_architecture(struct program *program, const struct call_numbers *numbers, enum filter_kind kind) {
  emit(program, LOAD(offsetof(struct seccomp_data, arch)));
  unsigned short skip = program->length;
  emit(program, JUMP_IF(BPF_JEQ, numbers->arch, 0, 0)); /* its false branch is set below */
  emit(program, LOAD(offsetof(struct seccomp_data, nr)));
  if (numbers->ignored_bits != 0) emit(program, (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~numbers->ignored_bits));
  uint32_t namespaces = kind == CGROUP_ESCAPES ? CLONE_NEWCGROUP : CLONE_NEWUSER | CLONE_NEWCGROUP;
  refuse_call(program, numbers->clone3, ENOSYS);
  refuse_flags(program, numbers->unshare, namespaces);
  refuse_flags(program, numbers->clone, namespaces);
  if (kind == SANDBOX_WITHOUT_NETWORK) refuse_network(program, numbers);
  if (kind != CGROUP_ESCAPES) {
    for (int i = 0; i < 3; i++) refuse_call(program, numbers->keyrings[i], EPERM);
    for (int i = 0; i < 3; i++) refuse_call(program, numbers->io_uring[i], ENOSYS);
    refuse_terminal_injection(program, numbers->ioctl);
  }
  emit(program, RETURN(SECCOMP_RET_ALLOW));
  program->code[skip].jf = (unsigned char)(program->length - skip - 1);
}

static int install_filter(enum filter_kind kind, const char **call) {
  struct program program = {.length = 0};
  for (size_t i = 0; i < ARCHITECTURE_COUNT; i++) emit_architecture(&program, &ARCHITECTURES[i], kind);
  emit(&program, RETURN(SECCOMP_RET_ALLOW));
  struct sock_fprog filter = {.len = program.length, .filter = program.code};
  *call = "prctl PR_SET_SECCOMP SECCOMP_MODE_FILTER";
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0) == 0 ? 0 : -errno;
}

int filter_system_calls(const char **call) { return install_filter(SANDBOX, call); }

int filter_system_calls_without_network(const char **call) { return install_filter(SANDBOX_WITHOUT_NETWORK, call); }

int refuse_cgroup_escapes(const char **call) { return install_filter(CGROUP_ESCAPES, call); }
#else
int filter_system_calls(const char **call) {
  *call = "seccomp (no filter is written for this architecture)";
  return -ENOSYS;
}

int filter_system_calls_without_network(const char **call) { return filter_system_calls(call); }

int refuse_cgroup_escapes(const char **call) { return filter_system_calls(call); }
#endif

/* Whether the system call `number` exists here: called with arguments it must refuse, it fails
 * with something else than ENOSYS (or EPERM, a seccomp profile's answer for one it does not know). */
static int has_call(long number, long a, long b, long c) {
  long result = syscall(number, a, b, c, 0L, 0L);
  return result >= 0 || (errno != ENOSYS && errno != EPERM);
}

const char *sandbox_kernel_gap(void) {
#ifndef HAS_CALL_FILTER
  return "a seccomp filter for this architecture (x86-64 and arm64 have one)";
#else
  if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) return "seccomp (CONFIG_SECCOMP)";
  if (!has_call(SYS_openat2, -1, (long)"", 0)) return "openat2 (Linux 5.6)";
  if (!has_call(SYS_open_tree, -1, (long)"", 0)) return "open_tree (Linux 5.2)";
  if (!has_call(SYS_fsmount, -1, 0, 0)) return "fsmount (Linux 5.2)";
  if (!has_call(SYS_mount_setattr, -1, (long)"", 0)) return "mount_setattr (Linux 5.12)";
  return NULL;
#endif
}
