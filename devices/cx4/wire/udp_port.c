// SPDX-License-Identifier: MIT
/*
 * UDP sockets of a modelled RoCE v2 port (see udp_port.h).  Linux socket options used:
 * ip(7) IP_MTU_DISCOVER, IP_PKTINFO, IP_RECVTOS, IP_RECVTTL, IP_TOS/IP_TTL control messages;
 * ipv6(7) IPV6_V6ONLY, IPV6_MTU_DISCOVER, IPV6_RECVPKTINFO, IPV6_RECVTCLASS, IPV6_RECVHOPLIMIT,
 * IPV6_FLOWINFO, IPV6_FREEBIND, IPV6_TCLASS/IPV6_HOPLIMIT control messages; udp(7)
 * UDP_NO_CHECK6_RX;
 * socket(7) SO_NO_CHECK, SO_RCVBUF(FORCE), SO_SNDBUF(FORCE); udp(7) UDP_SEGMENT, UDP_GRO;
 * sendmmsg(2), recvmmsg(2).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sendmmsg, recvmmsg */
#endif
#include <errno.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roce_sendmmsg.h"
#include "udp_port.h"

#ifndef SO_NO_CHECK
#define SO_NO_CHECK 11
#endif
#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#ifndef UDP_NO_CHECK6_RX
#define UDP_NO_CHECK6_RX 102
#endif
#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO 11 /* linux/in6.h: receive the flow label */
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78
#endif

#define DEFAULT_SOCKBUF (4 << 20)

static int set_int(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val)) ? -errno : 0;
}

/* Root may exceed net.core.[rw]mem_max with the *FORCE variants; others get what is allowed. */
static void set_buf(int fd, int force_opt, int opt, int bytes)
{
	if (set_int(fd, SOL_SOCKET, force_opt, bytes))
		set_int(fd, SOL_SOCKET, opt, bytes);
}

/* The options both families share; then the family's own. */
static int set_opts(int fd, int family, const struct roce_udp_port_opts *opts)
{
	int err;

	if (family == AF_INET) {
		/* The header-determinism options are mandatory: without them our ICRCs would be
		 * wrong. */
		err = set_int(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO);
		/* Linux refuses UDP_SEGMENT on SO_NO_CHECK sockets (udp_send_skb: -EINVAL), so a
		 * GSO port sends real UDP checksums; the ICRC masks them and receivers accept
		 * both. */
		if (!err && !(opts && opts->gso))
			err = set_int(fd, SOL_SOCKET, SO_NO_CHECK, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IP, IP_RECVTOS, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IP, IP_RECVTTL, 1);
	} else {
		err = set_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO);
		if (!err)
			err = set_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IPV6, IPV6_FLOWINFO, 1);
		if (!err)
			err = set_int(fd, IPPROTO_IPV6, IPV6_FREEBIND, 1);
		if (!err)
			err = set_int(fd, IPPROTO_UDP, UDP_NO_CHECK6_RX, 1);
	}
	if (!err && opts && opts->gro)
		err = set_int(fd, IPPROTO_UDP, UDP_GRO, 1);
	if (err)
		return err;
	set_buf(fd, SO_RCVBUFFORCE, SO_RCVBUF,
		opts && opts->rcvbuf ? opts->rcvbuf : DEFAULT_SOCKBUF);
	set_buf(fd, SO_SNDBUFFORCE, SO_SNDBUF,
		opts && opts->sndbuf ? opts->sndbuf : DEFAULT_SOCKBUF);
	return 0;
}

/* A socket of the family with the port's options, bound to sa; the bound port in *port. */
static int open_bound(int family, struct sockaddr *sa, socklen_t sl, uint16_t *port,
		      const struct roce_udp_port_opts *opts)
{
	int fd, err;

	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
	if (fd < 0)
		return -errno;
	err = set_opts(fd, family, opts);
	if (!err && (bind(fd, sa, sl) || getsockname(fd, sa, &sl)))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	*port = ntohs(family == AF_INET ? ((struct sockaddr_in *)sa)->sin_port
					: ((struct sockaddr_in6 *)sa)->sin6_port);
	return fd;
}

int roce_udp_port_open(struct roce_udp_port *p, uint32_t addr, uint16_t port,
		       const struct roce_udp_port_opts *opts)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	int fd;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	sin.sin_addr.s_addr = addr;
	fd = open_bound(AF_INET, (struct sockaddr *)&sin, sizeof(sin), &p->port, opts);
	if (fd < 0)
		return fd;
	p->fd = fd;
	p->net = ROCE_NET_IPV4;
	p->addr = addr;
	p->gro = opts && opts->gro;
	p->gso = opts && opts->gso;
	return 0;
}

int roce_udp_port_open6(struct roce_udp_port *p, const uint8_t addr[16], uint32_t scope,
			uint16_t port, const struct roce_udp_port_opts *opts)
{
	struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				    .sin6_scope_id = scope};
	int fd;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	memcpy(&sin6.sin6_addr, addr, 16);
	fd = open_bound(AF_INET6, (struct sockaddr *)&sin6, sizeof(sin6), &p->port, opts);
	if (fd < 0)
		return fd;
	p->fd = fd;
	p->net = ROCE_NET_IPV6;
	memcpy(p->addr6, addr, 16);
	p->scope = scope;
	p->gro = opts && opts->gro;
	p->gso = opts && opts->gso;
	return 0;
}

void roce_udp_port_close(struct roce_udp_port *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* Control space for the most we attach/receive per datagram. */
#define TX_CMSG_SPACE (CMSG_SPACE(sizeof(int)) * 2 + CMSG_SPACE(sizeof(uint16_t)))
#define RX_CMSG_SPACE (CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(int)) * 4)

union tx_cmsg {
	struct cmsghdr align;
	char buf[TX_CMSG_SPACE];
};

union rx_cmsg {
	struct cmsghdr align;
	char buf[RX_CMSG_SPACE];
};

static size_t put_cmsg(char *at, int level, int type, const void *data, size_t len)
{
	struct cmsghdr *c = (struct cmsghdr *)at;

	memset(at, 0, CMSG_SPACE(len)); /* alignment padding goes to the kernel too */
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	return CMSG_SPACE(len);
}

int roce_udp_send(struct roce_udp_port *p, const struct roce_udp_tx *tx, unsigned int n)
{
	struct mmsghdr mm[ROCE_UDP_BATCH];
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} to[ROCE_UDP_BATCH];
	union tx_cmsg cm[ROCE_UDP_BATCH]; /* filled by put_cmsg before use */
	bool v6 = p->net == ROCE_NET_IPV6;
	int lvl = v6 ? IPPROTO_IPV6 : IPPROTO_IP;
	unsigned int done = 0;

	while (done < n) {
		unsigned int k, batch = n - done < ROCE_UDP_BATCH ? n - done : ROCE_UDP_BATCH;
		int r;

		for (k = 0; k < batch; k++) {
			const struct roce_udp_tx *t = &tx[done + k];
			struct msghdr *m = &mm[k].msg_hdr;
			size_t cl = 0;

			if (v6) {
				if (!t->daddr6)
					return done ? (int)done : -EINVAL;
				to[k].v6 = (struct sockaddr_in6){
				    .sin6_family = AF_INET6,
				    .sin6_port = htons(t->dport),
				    .sin6_scope_id = p->scope,
				};
				memcpy(&to[k].v6.sin6_addr, t->daddr6, 16);
			} else {
				to[k].v4 = (struct sockaddr_in){
				    .sin_family = AF_INET,
				    .sin_port = htons(t->dport),
				    .sin_addr.s_addr = t->daddr,
				};
			}
			if (t->tos) {
				int v = t->tos;

				// cppcheck-suppress legacyUninitvar ; put_cmsg writes it
				cl += put_cmsg(cm[k].buf + cl, lvl, v6 ? IPV6_TCLASS : IP_TOS, &v,
					       sizeof(v));
			}
			if (t->ttl) {
				int v = t->ttl;

				cl += put_cmsg(cm[k].buf + cl, lvl, v6 ? IPV6_HOPLIMIT : IP_TTL, &v,
					       sizeof(v));
			}
			if (t->gso_size)
				cl += put_cmsg(cm[k].buf + cl, SOL_UDP, UDP_SEGMENT, &t->gso_size,
					       sizeof(t->gso_size));
			*m = (struct msghdr){
			    .msg_name = &to[k],
			    .msg_namelen = v6 ? sizeof(to[k].v6) : sizeof(to[k].v4),
			    .msg_iov = (struct iovec *)t->iov,
			    .msg_iovlen = (size_t)t->iovcnt,
			    .msg_control = cl ? cm[k].buf : NULL,
			    .msg_controllen = cl,
			};
		}
		r = roce_sendmmsg(p->fd, mm, batch);
		if (r < 0)
			return done ? (int)done : r;
		done += (unsigned int)r;
		if ((unsigned int)r < batch)
			break;
	}
	return (int)done;
}

int roce_udp_recv(struct roce_udp_port *p, struct roce_udp_rx *rx, unsigned int n)
{
	struct mmsghdr mm[ROCE_UDP_BATCH];
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} from[ROCE_UDP_BATCH];
	struct iovec iov[ROCE_UDP_BATCH];
	union rx_cmsg cm[ROCE_UDP_BATCH];
	unsigned int k, batch = n < ROCE_UDP_BATCH ? n : ROCE_UDP_BATCH;
	int r;

	for (k = 0; k < batch; k++) {
		iov[k].iov_base = rx[k].buf;
		iov[k].iov_len = rx[k].size;
		mm[k].msg_hdr = (struct msghdr){
		    .msg_name = &from[k],
		    .msg_namelen = sizeof(from[k]),
		    .msg_iov = &iov[k],
		    .msg_iovlen = 1,
		    .msg_control = cm[k].buf,
		    .msg_controllen = sizeof(cm[k].buf),
		};
	}
	do
		r = recvmmsg(p->fd, mm, batch, MSG_DONTWAIT, NULL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -errno;

	for (k = 0; k < (unsigned int)r; k++) {
		struct roce_udp_rx *x = &rx[k];
		struct msghdr *m = &mm[k].msg_hdr;
		struct cmsghdr *c;

		x->len = mm[k].msg_len;
		x->truncated = m->msg_flags & MSG_TRUNC;
		x->seg_size = 0;
		if (p->net == ROCE_NET_IPV6) {
			x->addr = (struct roce_addr){
			    .net = ROCE_NET_IPV6,
			    .sport = ntohs(from[k].v6.sin6_port),
			    .dport = p->port,
			    .ttl = 64,
			    .flow_label = ntohl(from[k].v6.sin6_flowinfo) & 0xfffff,
			};
			memcpy(x->addr.sgid, &from[k].v6.sin6_addr, 16);
			memcpy(x->addr.dgid, p->addr6, 16);
		} else {
			x->addr = (struct roce_addr){
			    .saddr = from[k].v4.sin_addr.s_addr,
			    .daddr = p->addr,
			    .sport = ntohs(from[k].v4.sin_port),
			    .dport = p->port,
			    .ttl = 64,
			};
		}
		for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
			if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
				struct in_pktinfo pi;

				memcpy(&pi, CMSG_DATA(c), sizeof(pi));
				x->addr.daddr = pi.ipi_addr.s_addr;
			} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) {
				x->addr.tos = *(const uint8_t *)CMSG_DATA(c);
			} else if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TTL) {
				int v;

				memcpy(&v, CMSG_DATA(c), sizeof(v));
				x->addr.ttl = (uint8_t)v;
			} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
				struct in6_pktinfo pi;

				memcpy(&pi, CMSG_DATA(c), sizeof(pi));
				memcpy(x->addr.dgid, &pi.ipi6_addr, 16);
			} else if (c->cmsg_level == IPPROTO_IPV6 &&
				   (c->cmsg_type == IPV6_TCLASS || c->cmsg_type == IPV6_HOPLIMIT)) {
				int v;

				memcpy(&v, CMSG_DATA(c), sizeof(v));
				if (c->cmsg_type == IPV6_TCLASS)
					x->addr.tos = (uint8_t)v;
				else
					x->addr.ttl = (uint8_t)v;
			} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_FLOWINFO) {
				uint32_t v;

				memcpy(&v, CMSG_DATA(c), sizeof(v));
				x->addr.flow_label = ntohl(v) & 0xfffff;
			} else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
				int v;

				memcpy(&v, CMSG_DATA(c), sizeof(v));
				x->seg_size = (uint16_t)v;
			}
		}
	}
	return r;
}

int roce_udp_wait(struct roce_udp_port *p, int timeout_ms)
{
	struct pollfd pfd = {.fd = p->fd, .events = POLLIN};
	int r;

	do
		r = poll(&pfd, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r > 0;
}
