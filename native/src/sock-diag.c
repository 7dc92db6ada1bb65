/* See sock-diag.h. An exact request (no NLM_F_DUMP) makes the kernel look the four numbers up in
 * its connection hash (inet_diag_find_one_icsk), whatever the table holds. */
#define _GNU_SOURCE
#include "sock-diag.h"

#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef INET_DIAG_CGROUP_ID
#define INET_DIAG_CGROUP_ID 21
#endif

/* The cgroup id among the attributes that follow `message` in `header`: 0 when none is there. */
static uint64_t read_cgroup_id(const struct nlmsghdr *header, const struct inet_diag_msg *message) {
  uint64_t id = 0;
  int remaining = (int)header->nlmsg_len - (int)NLMSG_LENGTH(sizeof *message);
  for (const struct rtattr *attribute = (const struct rtattr *)(message + 1); RTA_OK(attribute, remaining); attribute = RTA_NEXT(attribute, remaining)) {
    if (attribute->rta_type == INET_DIAG_CGROUP_ID && RTA_PAYLOAD(attribute) >= sizeof id) memcpy(&id, RTA_DATA(attribute), sizeof id);
  }
  return id;
}

int find_tcp_socket(int ipv6, const uint8_t *local, int local_port, const uint8_t *remote, int remote_port,
                    struct tcp_socket_info *info) {
  struct {
    struct nlmsghdr header;
    struct inet_diag_req_v2 request;
  } message;
  memset(&message, 0, sizeof message);
  message.header.nlmsg_len = sizeof message;
  message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
  message.header.nlmsg_flags = NLM_F_REQUEST;
  message.request.sdiag_family = ipv6 ? AF_INET6 : AF_INET;
  message.request.sdiag_protocol = IPPROTO_TCP;
  message.request.idiag_states = ~0U;
  struct inet_diag_sockid *id = &message.request.id;
  size_t length = ipv6 ? 16 : 4;
  memcpy(id->idiag_src, local, length);
  memcpy(id->idiag_dst, remote, length);
  id->idiag_sport = htons((uint16_t)local_port);
  id->idiag_dport = htons((uint16_t)remote_port);
  id->idiag_cookie[0] = INET_DIAG_NOCOOKIE;
  id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;

  int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
  if (fd < 0) return -errno;
  struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
  if (sendto(fd, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  /* One answer: the socket's inet_diag_msg (with the attributes every answer has), or an error. */
  union {
    struct nlmsghdr header;
    char bytes[8192];
  } answer;
  ssize_t got;
  do got = recv(fd, &answer, sizeof answer, 0);
  while (got < 0 && errno == EINTR);
  int err = got < 0 ? errno : 0;
  close(fd);
  if (err != 0) return -err;
  struct nlmsghdr *header = &answer.header;
  if (!NLMSG_OK(header, (size_t)got)) return -EBADMSG;
  if (header->nlmsg_type == NLMSG_ERROR) {
    const struct nlmsgerr *error = NLMSG_DATA(header);
    return error->error < 0 ? error->error : -EBADMSG;
  }
  if (header->nlmsg_type != SOCK_DIAG_BY_FAMILY || header->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
    return -EBADMSG;
  const struct inet_diag_msg *found = NLMSG_DATA(header);
  /* The lookup falls back to a listener on the local port when no connection matches: that is
   * not the connection asked for. */
  if (found->id.idiag_dport != id->idiag_dport || found->id.idiag_sport != id->idiag_sport) return -ENOENT;
  info->inode = found->idiag_inode;
  info->cgroup_id = read_cgroup_id(header, found);
  info->uid = found->idiag_uid;
  info->state = found->idiag_state;
  return 0;
}
