/* Whether a task's sandbox can be set up where the tasks run: the leader's own steps (sandbox.h),
 * taken in a child forked for the purpose, in the tasks' namespaces, with what the shims have there
 * (every capability of their user namespace, the seccomp filters and security modules around the
 * daemon). A container's seccomp profile may refuse a call that the kernel has, and only trying it
 * there tells. */
#ifndef HIVE_SANDBOX_PROBE_H
#define HIVE_SANDBOX_PROBE_H

#include <stddef.h>

/* 0 when a sandbox with its network cut and every write confined can be set up; else -1, with
 * "ERRNO CALL [OBJECT]" in `reason`, the first step that failed. */
int probe_sandbox(char *reason, size_t size);

#endif
