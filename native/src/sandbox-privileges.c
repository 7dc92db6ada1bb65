/* What a sandboxed task may still do as root (sandbox.h): the capabilities it keeps, no_new_privs,
 * and a seccomp filter that refuses typing into a terminal. Also what of the sandbox's calls this
 * kernel lacks. */
#define _GNU_SOURCE
#include "sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
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

/* The architectures whose system calls a process here can make, and ioctl's number in each: a
 * filter that looked at the native one alone would let a 32-bit ioctl through. */
#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#define NATIVE_IOCTL 16
#define NATIVE_IOCTL_ALSO (0x40000000 + 514) /* x32's ioctl, under the same architecture */
#define COMPAT_ARCH AUDIT_ARCH_I386
#define COMPAT_IOCTL 54
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#define NATIVE_IOCTL 29
#define NATIVE_IOCTL_ALSO 29
#define COMPAT_ARCH AUDIT_ARCH_ARM
#define COMPAT_IOCTL 54
#endif

/* The low 32 bits of a system call's argument (ioctl's request is an unsigned int). */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARGUMENT_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n))
#else
#define ARGUMENT_LOW(n) (offsetof(struct seccomp_data, args) + 8 * (n) + 4)
#endif

int block_terminal_injection(const char **call) {
#ifdef NATIVE_ARCH
  /* Jumps count the instructions skipped: labels are the indexes in the comments. */
  struct sock_filter filter[] = {
      /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 4),
      /* 2 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      /* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_IOCTL, 5, 0),
      /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_IOCTL_ALSO, 4, 0),
      /* 5 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_ARCH, 0, 5),
      /* 7 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, COMPAT_IOCTL, 0, 3),
      /* 9 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARGUMENT_LOW(1)),
      /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCSTI, 2, 0),
      /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TIOCLINUX, 1, 0),
      /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      /* 13 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  struct sock_fprog program = {.len = sizeof filter / sizeof *filter, .filter = filter};
  *call = "prctl PR_SET_SECCOMP SECCOMP_MODE_FILTER";
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0 ? 0 : -errno;
#else
  *call = "seccomp (no filter is written for this architecture)";
  return -ENOSYS;
#endif
}

/* Whether the system call `number` exists here: called with arguments it must refuse, it fails
 * with something else than ENOSYS (or EPERM, a seccomp profile's answer for one it does not know). */
static int has_call(long number, long a, long b, long c) {
  long result = syscall(number, a, b, c, 0L, 0L);
  return result >= 0 || (errno != ENOSYS && errno != EPERM);
}

const char *sandbox_kernel_gap(void) {
#ifndef NATIVE_ARCH
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
