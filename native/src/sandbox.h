/* A task leader's sandbox (sandbox.c): Landlock for writes, a network namespace of its own. */
#ifndef HIVE_SANDBOX_H
#define HIVE_SANDBOX_H

/* The Landlock ABI version this kernel offers (1 and up), or -errno (-ENOSYS, -EOPNOTSUPP: none). */
int landlock_abi(void);

/* Confines the calling process, and all it starts from now on, to writing beneath `dirs` (and to
 * the devices a shell needs), with no_new_privs set: 0, or -errno with `*call` and `*object`
 * (a path, or "") naming what failed. */
int confine_writes(const char *const *dirs, int count, const char **call, const char **object);

/* Moves the calling process into a network namespace of its own with loopback up, and drops
 * CAP_SYS_ADMIN from its bounding set so that nothing it execs can leave it: 0, or -errno with
 * `*call` naming what failed. */
int isolate_network(const char **call);

#endif
