/* SPDX-License-Identifier: MIT */
/* A batch of frames onto a port's socket without blocking (udp_port and packet_port). */
#ifndef ROCE_SENDMMSG_H
#define ROCE_SENDMMSG_H

#include <errno.h>
#include <sys/socket.h>

/*
 * sendmmsg(2) of mm[0..n) with MSG_DONTWAIT: how many frames went (a signal retries), 0 when
 * the socket's buffer is full (EAGAIN, ENOBUFS: the sender tries again later), -errno on an
 * error. Needs _GNU_SOURCE before the first system header.
 */
static inline int roce_sendmmsg(int fd, struct mmsghdr *mm, unsigned int n)
{
	int r;

	do
		r = sendmmsg(fd, mm, n, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? 0 : -errno;
	return r;
}

#endif /* ROCE_SENDMMSG_H */
