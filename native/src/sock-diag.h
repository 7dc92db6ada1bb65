/* One TCP socket of this network namespace, found by its four numbers through the kernel's
 * sock_diag netlink interface: a lookup in its connection hash, not a walk of it. */
#ifndef HIVE_SOCK_DIAG_H
#define HIVE_SOCK_DIAG_H

#include <stdint.h>

/* What the kernel says of a TCP socket: its inode (0: a socket in TIME_WAIT, or an orphan its
 * process closed), the id of the cgroup v2 its maker was in when it made it (0 where the kernel
 * does not say: before Linux 5.7), the uid of its file (its maker's, as this process's user namespace
 * sees it), and its state (TCP_ESTABLISHED 1, TCP_FIN_WAIT1 4, ...: one that has sent its FIN is
 * past 1). */
struct tcp_socket_info {
  uint64_t inode, cgroup_id;
  uint32_t uid;
  int state;
};

/* The TCP socket whose local end is `local`:`local_port` and remote end `remote`:`remote_port`
 * (addresses of 4 bytes for IPv4, 16 for IPv6, in network order), in *found. 0 when found, -ENOENT
 * when no such connection is in this namespace, else -errno. */
int find_tcp_socket(int ipv6, const uint8_t *local, int local_port, const uint8_t *remote, int remote_port,
                    struct tcp_socket_info *found);

#endif
