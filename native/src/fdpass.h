/* A framed message over a unix stream socket, with up to FDPASS_MAX_FDS file descriptors riding on
 * it: as many as a spawned child may be given (spawn.c, shim-fork.c). */
#ifndef HIVE_FDPASS_H
#define HIVE_FDPASS_H

#include <stddef.h>

#define FDPASS_MAX_FDS 12

/* Sends `length` bytes of `data` prefixed by their length, with `fds` attached. 0 or -errno. */
int send_frame(int socket, const void *data, size_t length, const int *fds, int nfds);

/* Receives one frame into a malloc'd buffer (caller frees) and up to FDPASS_MAX_FDS fds.
 * Returns the payload length, 0 at EOF, or -errno. */
long receive_frame(int socket, char **data, int *fds, int *nfds);

#endif
