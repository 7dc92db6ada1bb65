/* One TCP socket of this network namespace, found by its four numbers through the kernel's
 * sock_diag netlink interface: a lookup in its connection hash, not a walk of it. */
#ifndef HIVE_SOCK_DIAG_H
#define HIVE_SOCK_DIAG_H

#include <stdint.h>

/* The inode of the TCP socket whose local end is `local`:`local_port` and remote end
 * `remote`:`remote_port` (addresses of 4 bytes for IPv4, 16 for IPv6, in network order), in
 * *inode (0: a socket in TIME_WAIT, or an orphan its process closed). 0 when found, -ENOENT when
 * no such connection is in this namespace, else -errno. */
int tcp_socket_inode(int ipv6, const uint8_t *local, int local_port, const uint8_t *remote, int remote_port,
                     uint64_t *inode);

#endif
