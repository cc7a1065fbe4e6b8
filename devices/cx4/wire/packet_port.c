// SPDX-License-Identifier: MIT
/* The AF_PACKET socket of a modelled port (see packet_port.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "packet_port.h"
#include "roce_sendmmsg.h"

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

int roce_packet_port_open(struct roce_packet_port *p, const char *ifname, uint16_t type)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(type)};
	struct ifreq ifr = {0};
	int fd, one = 1, err;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	if (strlen(ifname) >= sizeof(ifr.ifr_name))
		return -ENODEV;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(type));
	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFINDEX, &ifr))
		goto fail;
	sll.sll_ifindex = ifr.ifr_ifindex;
	p->ifindex = ifr.ifr_ifindex;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr))
		goto fail;
	memcpy(p->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFMTU, &ifr))
		goto fail;
	p->mtu = (unsigned int)ifr.ifr_mtu;
	/* older kernels lack it: then our own frames come back and the MAC filter drops them */
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		goto fail;
	p->fd = fd;
	return 0;
fail:
	err = -errno;
	close(fd);
	return err;
}

void roce_packet_port_close(struct roce_packet_port *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

int roce_packet_send(struct roce_packet_port *p, const struct roce_packet_tx *tx, unsigned int n)
{
	struct mmsghdr mm[ROCE_PACKET_BATCH];
	unsigned int done = 0;

	while (done < n) {
		unsigned int k, batch = n - done < ROCE_PACKET_BATCH ? n - done : ROCE_PACKET_BATCH;
		int r;

		/* bound to the interface: the frame's own header says where it goes */
		for (k = 0; k < batch; k++)
			mm[k].msg_hdr = (struct msghdr){
			    .msg_iov = (struct iovec *)tx[done + k].iov,
			    .msg_iovlen = (size_t)tx[done + k].iovcnt,
			};
		r = roce_sendmmsg(p->fd, mm, batch);
		if (r < 0)
			return done ? (int)done : r;
		done += (unsigned int)r;
		if ((unsigned int)r < batch)
			break;
	}
	return (int)done;
}

int roce_packet_recv(struct roce_packet_port *p, struct roce_packet_rx *rx, unsigned int n)
{
	struct mmsghdr mm[ROCE_PACKET_BATCH];
	struct iovec iov[ROCE_PACKET_BATCH];
	struct sockaddr_ll from[ROCE_PACKET_BATCH];
	unsigned int k, got = 0, batch = n < ROCE_PACKET_BATCH ? n : ROCE_PACKET_BATCH;
	int r;

	for (k = 0; k < batch; k++) {
		iov[k] = (struct iovec){.iov_base = rx[k].buf, .iov_len = rx[k].size};
		mm[k].msg_hdr = (struct msghdr){.msg_name = &from[k],
						.msg_namelen = sizeof(from[k]),
						.msg_iov = &iov[k],
						.msg_iovlen = 1};
	}
	do
		r = recvmmsg(p->fd, mm, batch, MSG_DONTWAIT | MSG_TRUNC, NULL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;
	for (k = 0; k < (unsigned int)r; k++) {
		if (from[k].sll_pkttype == PACKET_OUTGOING)
			continue; /* our own, where PACKET_IGNORE_OUTGOING is missing */
		rx[got].buf = iov[k].iov_base;
		rx[got].size = iov[k].iov_len;
		rx[got].truncated = mm[k].msg_len > iov[k].iov_len;
		rx[got].len = rx[got].truncated ? iov[k].iov_len : mm[k].msg_len;
		got++;
	}
	return (int)got;
}
