/* The mounts of the tasks' mount namespace, as hive-task-init's init sets them up (task-init.c),
 * before it moves into a user namespace of its own, whose mount namespace copy locks them all. */
#ifndef HIVE_TASK_MOUNTS_H
#define HIVE_TASK_MOUNTS_H

#define TASK_MOUNTS_MAX_PATHS 16

/* The paths given with one of hive-task-init's options, in their order. */
struct path_list {
  const char *paths[TASK_MOUNTS_MAX_PATHS];
  int count;
};

/* What to guard: directories bound read-only onto themselves (-r), files covered by /dev/null
 * (-h), directories covered by an empty read-only tmpfs (-H); a -r directory with a -s one beneath
 * it is covered by an empty read-only tmpfs but for that one, bound back read-only (the state dir
 * and its output folder). Every cgroup mount is made read-only. */
struct task_mounts {
  struct path_list read_only, hidden_files, hidden_dirs, shown;
};

/* In the calling process (the first of a new PID namespace, in a mount namespace of its own): every
 * mount made a slave of the host's; a /proc of this PID namespace mounted over /proc, with each mount
 * the old /proc had beneath it made again over the new one (a container's masks) and what changes
 * the whole host read-only; then `plan`. Where the kernel refuses a /proc of its own (a container
 * that masks paths of its /proc, which a new one would show), `*proc_refused` is that errno and
 * the old /proc stays. Every cgroup mount read-only. Returns 0, or
 * -errno with `*call` and `*object` naming what failed. */
int set_up_task_mounts(const struct task_mounts *plan, int *proc_refused, const char **call, const char **object);

#endif
