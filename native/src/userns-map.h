/* The id maps of a user namespace, written through the /proc directory of a process in it (an fd
 * of /proc/PID, or of /proc/self taken by the process itself: a pid names another process, or none,
 * where the /proc at hand is of another PID namespace). */
#ifndef HIVE_USERNS_MAP_H
#define HIVE_USERNS_MAP_H

/* Writes to FILE (uid_map or gid_map) of the process whose /proc directory is open at `dir` the
 * ranges of the caller's own map, each as the same ids inside and out: root is root inside, and a
 * file's owner is the same on both sides. The caller needs CAP_SETUID (CAP_SETGID) in the parent
 * namespace, where those ids are mapped. 0 or -errno. */
int write_identity_map(int dir, const char *file);

/* Maps the user namespace of the process at `dir` with every id of the caller's own map to itself
 * where the caller may (root in a container holds CAP_SETUID and CAP_SETGID there), else with the
 * caller's own uid and gid as root (setgroups denied, as an unprivileged map needs). -errno with
 * `*file` the file that failed. */
int map_own_ids(int dir, const char **file);

#endif
