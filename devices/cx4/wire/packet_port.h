/* SPDX-License-Identifier: MIT */
/*
 * The AF_PACKET socket of one modelled port on an Ethernet network device: how RoCE v1 frames
 * (Ethertype 0x8915, roce_eth.h) leave and arrive, since no kernel protocol carries them.
 *
 * packet(7): SOCK_RAW (the frame with its Ethernet header), bound to the device's ifindex and
 * protocol 0x8915 only; PACKET_IGNORE_OUTGOING, so the port does not hear its own frames;
 * nonblocking; sendmmsg/recvmmsg batches. Needs CAP_NET_RAW: without it the open fails with
 * EPERM and the port carries no RoCE v1 (the model then does not offer it).
 */
#ifndef BV_ROCE_PACKET_PORT_H
#define BV_ROCE_PACKET_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define ROCE_PACKET_BATCH 64

struct roce_packet_port {
	int fd;
	int ifindex;
	uint8_t mac[6]; /* the device's own address */
	unsigned int mtu;
};

/* Open on the interface ifname for Ethertype type. 0 or -errno (ENODEV, EPERM, ...). */
int roce_packet_port_open(struct roce_packet_port *p, const char *ifname, uint16_t type);
void roce_packet_port_close(struct roce_packet_port *p);

/* One frame to send: its pieces, the Ethernet header first (the destination is its MAC). */
struct roce_packet_tx {
	const struct iovec *iov;
	int iovcnt;
};

/* Send n frames; returns how many were queued (fewer when the device queue is full) or -errno
 * when the first one failed otherwise. */
int roce_packet_send(struct roce_packet_port *p, const struct roce_packet_tx *tx, unsigned int n);

struct roce_packet_rx {
	uint8_t *buf; /* in */
	size_t size;  /* in */
	size_t len;   /* out: the frame's bytes */
	bool truncated;
};

/* Receive up to n pending frames without blocking: the number received, 0, or -errno. */
int roce_packet_recv(struct roce_packet_port *p, struct roce_packet_rx *rx, unsigned int n);

#endif /* BV_ROCE_PACKET_PORT_H */
