#define _GNU_SOURCE
#include "fdpass.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FRAME_BYTES (64u << 20)

static int write_all(int socket, const char *data, size_t length) {
  while (length > 0) {
    ssize_t sent = send(socket, data, length, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) return -errno;
    data += sent;
    length -= (size_t)sent;
  }
  return 0;
}

static int read_all(int socket, char *data, size_t length) {
  while (length > 0) {
    ssize_t got = recv(socket, data, length, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return -errno;
    if (got == 0) return -EPIPE;
    data += got;
    length -= (size_t)got;
  }
  return 0;
}

int send_frame(int socket, const void *data, size_t length, const int *fds, int nfds) {
  uint32_t header = (uint32_t)length;
  char control[CMSG_SPACE(sizeof(int) * FDPASS_MAX_FDS)];
  memset(control, 0, sizeof control);
  struct iovec vector = {.iov_base = &header, .iov_len = sizeof header};
  struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1};
  if (nfds > 0) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
    struct cmsghdr *header_cmsg = CMSG_FIRSTHDR(&message);
    header_cmsg->cmsg_level = SOL_SOCKET;
    header_cmsg->cmsg_type = SCM_RIGHTS;
    header_cmsg->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(header_cmsg), fds, sizeof(int) * (size_t)nfds);
  }
  ssize_t sent;
  do sent = sendmsg(socket, &message, MSG_NOSIGNAL);
  while (sent < 0 && errno == EINTR);
  if (sent < 0) return -errno;
  if ((size_t)sent < sizeof header) {
    int err = write_all(socket, (const char *)&header + sent, sizeof header - (size_t)sent);
    if (err < 0) return err;
  }
  return write_all(socket, data, length);
}

long receive_frame(int socket, char **data, int *fds, int *nfds) {
  uint32_t header;
  char control[CMSG_SPACE(sizeof(int) * FDPASS_MAX_FDS)];
  struct iovec vector = {.iov_base = &header, .iov_len = sizeof header};
  struct msghdr message = {.msg_iov = &vector, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
  ssize_t got;
  do got = recvmsg(socket, &message, MSG_CMSG_CLOEXEC);
  while (got < 0 && errno == EINTR);
  if (got < 0) return -errno;
  if (got == 0) return 0;
  *nfds = 0;
  for (struct cmsghdr *cmsg = CMSG_FIRSTHDR(&message); cmsg != NULL; cmsg = CMSG_NXTHDR(&message, cmsg)) {
    if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS) continue;
    int count = (int)((cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    if (count > FDPASS_MAX_FDS) count = FDPASS_MAX_FDS;
    memcpy(fds, CMSG_DATA(cmsg), sizeof(int) * (size_t)count);
    *nfds = count;
  }
  int err = 0;
  if ((size_t)got < sizeof header) err = read_all(socket, (char *)&header + got, sizeof header - (size_t)got);
  if (err == 0 && header > MAX_FRAME_BYTES) err = -EMSGSIZE;
  if (err == 0 && (*data = malloc(header + 1u)) == NULL) err = -ENOMEM;
  if (err == 0 && (err = read_all(socket, *data, header)) < 0) {
    free(*data);
    *data = NULL;
  }
  if (err < 0) {
    for (int i = 0; i < *nfds; i++) close(fds[i]);
    *nfds = 0;
    return err;
  }
  (*data)[header] = '\0';
  return (long)header;
}
