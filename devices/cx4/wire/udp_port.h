/* SPDX-License-Identifier: MIT */
/*
 * The UDP sockets of one modelled RoCE v2 port.
 *
 * Each modelled port owns one IPv4 address (on loopback: its own 127.x.y.z) and binds UDP 4791
 * on it, and one socket per IPv6 address of its GID table (roce_udp_port_open6: link-local ones
 * with the interface as scope).  The socket is set up so that the kernel's IPv4/UDP header is predictable, because the
 * ICRC covers it (see roce_pkt.h, shared/research/cx4.md §4.8):
 *   - never connect()ed, and IP_MTU_DISCOVER = IP_PMTUDISC_DO: DF set and IP ID 0 on every
 *     datagram (Linux ip_select_ident_segs); also means oversize datagrams fail with EMSGSIZE
 *     instead of being fragmented (RoCE never fragments: the path MTU must fit the device MTU);
 *   - SO_NO_CHECK = 1: UDP checksum 0, as RoCE v2 NICs send (unless opts.gso);
 *   - IP_PKTINFO, IP_RECVTOS, IP_RECVTTL: each received datagram reports its destination address
 *     (needed for the ICRC), TOS (ECN marks for congestion control) and TTL;
 *   - O_NONBLOCK: the model's threads batch with sendmmsg/recvmmsg and block in poll() only when
 *     idle (roce_udp_wait).
 * Per-datagram TOS/TTL (the address vector's traffic class and hop limit) go in IP_TOS/IP_TTL
 * control messages; the ICRC masks both.
 *
 * IPv6 (ipv6(7)): IPV6_V6ONLY; IPV6_MTU_DISCOVER = IPV6_PMTUDISC_DO (IPv6 routers never
 * fragment, and neither may the sender); IPV6_RECVPKTINFO, IPV6_RECVTCLASS, IPV6_RECVHOPLIMIT,
 * IPV6_FLOWINFO on receive; IPV6_TCLASS / IPV6_HOPLIMIT control messages on send; the kernel
 * computes the UDP checksum (IPv6 requires one; UDP_NO_CHECK6_RX accepts senders that send 0)
 * and picks the flow label (net.ipv6.auto_flowlabels), both masked or unchecked by the ICRC;
 * IPV6_FREEBIND, so that an address still in duplicate address detection can be bound. There
 * is no IPv6 Identification: the kernel's header is always what roce_net_hdr writes, up to the
 * masked fields.
 */
#ifndef BV_ROCE_UDP_PORT_H
#define BV_ROCE_UDP_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "roce_pkt.h"

/* Most datagrams one roce_udp_send/recv call hands to the kernel in one system call. */
#define ROCE_UDP_BATCH 64

struct roce_udp_port {
	int fd;
	uint8_t net;	  /* ROCE_NET_IPV4 or ROCE_NET_IPV6 */
	uint32_t addr;	  /* bound IPv4 address, network byte order */
	uint8_t addr6[16]; /* bound IPv6 address */
	uint32_t scope;	  /* its interface (link-local addresses), 0 = none */
	uint16_t port; /* bound UDP port, host order (4791, or ephemeral if asked for 0) */
	bool gro;      /* UDP_GRO enabled: received buffers may hold several datagrams */
	bool gso;      /* UDP_SEGMENT allowed (UDP checksums on, see opts.gso) */
};

struct roce_udp_port_opts {
	int rcvbuf; /* socket buffer sizes in bytes; 0 = 4 MiB */
	int sndbuf;
	bool gro; /* enable UDP_GRO (receiver must split by roce_udp_rx.seg_size) */
	bool gso; /* allow roce_udp_tx.gso_size.  Linux refuses UDP GSO on a socket
		   * with SO_NO_CHECK, so such a port sends real UDP checksums
		   * instead of 0 (masked by the ICRC; legal per Annex A17). */
};

/*
 * Open and bind addr:port (addr in network byte order; port 0 = let the kernel choose, for
 * tests).  opts may be NULL.  Returns 0 or -errno.
 */
int roce_udp_port_open(struct roce_udp_port *p, uint32_t addr, uint16_t port,
		       const struct roce_udp_port_opts *opts);
/* The same for an IPv6 address; scope: the interface index of a link-local one (else 0). */
int roce_udp_port_open6(struct roce_udp_port *p, const uint8_t addr[16], uint32_t scope,
			uint16_t port, const struct roce_udp_port_opts *opts);
void roce_udp_port_close(struct roce_udp_port *p);

/* One datagram to send. */
struct roce_udp_tx {
	const struct iovec *iov; /* the UDP payload, in pieces (e.g. headers, payload, tail) */
	int iovcnt;
	uint32_t daddr;	   /* network byte order (IPv4 ports) */
	const uint8_t *daddr6; /* IPv6 ports: the destination (scope: the port's own) */
	uint16_t dport;	   /* host order */
	uint8_t tos;	   /* 0: socket default (0) */
	uint8_t ttl;	   /* 0: socket default (64 on Linux) */
	uint16_t gso_size; /* 0: one datagram.  Otherwise UDP GSO (UDP_SEGMENT, port
			    * opened with opts.gso): the kernel cuts the payload into
			    * datagrams of gso_size bytes (the last may be shorter), at
			    * most 64; segment i leaves with IPv4 ID i (measured through
			    * a TUN device, docs/roce-wire.md), so build segment i's ICRC
			    * with roce_addr.ip_id = i. */
};

/*
 * Send n datagrams with as few sendmmsg calls as possible.  Returns how many were queued (the
 * first ones, in order; fewer than n when the socket buffer is full), or -errno if the first
 * one failed for another reason than EAGAIN.
 */
int roce_udp_send(struct roce_udp_port *p, const struct roce_udp_tx *tx, unsigned int n);

/* One receive slot. */
struct roce_udp_rx {
	uint8_t *buf;	       /* in: where to put the datagram */
	size_t size;	       /* in: buffer size */
	size_t len;	       /* out: bytes received */
	struct roce_addr addr; /* out: net of the port; saddr/sgid, sport from the sender,
				* daddr/dgid from IP(V6)_PKTINFO, dport = the bound port, tos,
				* ttl, flow label (IPv6); ip_id = 0 (unknown) */
	uint16_t seg_size;     /* out: with UDP_GRO, the size of each coalesced datagram
				* (all but the last), 0 if buf holds one datagram */
	bool truncated;	       /* out: the datagram was longer than size (data lost) */
};

/*
 * Receive up to n pending datagrams without blocking.  Returns the number received (0 if none
 * is pending) or -errno.
 */
int roce_udp_recv(struct roce_udp_port *p, struct roce_udp_rx *rx, unsigned int n);

/* Block until a datagram is pending or timeout_ms passes (-1: forever).  1, 0 or -errno. */
int roce_udp_wait(struct roce_udp_port *p, int timeout_ms);

#endif /* BV_ROCE_UDP_PORT_H */
