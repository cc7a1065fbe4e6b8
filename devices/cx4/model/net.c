// SPDX-License-Identifier: MIT
/*
 * The wire of one modelled port: RoCE v2 over UDP (IBTA Annex A17), through the wire library
 * (devices/cx4/wire: headers, ICRC, parse, pcap, UDP sockets).
 *
 * Receive: one socket bound to the port's IP:4791; recvmmsg takes up to 64 datagrams per
 * system call, each is parsed and checked (framing, ICRC with the sender's IP ID solved when
 * it is not 0, as for rxe or a real NIC), then handed to the responder (requests) or the
 * completer (responses) of its destination QP.
 *
 * Transmit: the requester and responder build packets in a queue of slots: headers are
 * written by roce_write_hdrs; payload either points into fd-backed host memory (zero copy) or
 * is read into the slot's own buffer with process_vm_readv, one call for all the slots of a
 * pass (dma_batch). At the end of the pass the ICRC is computed over the exact IPv4/UDP
 * header the kernel will send (unconnected socket, IP_PMTUDISC_DO: ID 0, DF) and the queue
 * goes out with sendmmsg, grouped by source socket. Per-QP UDP source ports give the
 * entropy ECMP networks expect (RoCE v2 practice; roce_cap r_roce_min/max_src_udp_port):
 * a small pool of sockets bound to ports in 0xC000..0xFFFF, one picked per QP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"


static uint16_t base_port(const struct mdev *d)
{
	uint32_t h = d->cfg.ipv4 * 2654435761u;

	return (uint16_t)(0xc000 + (h >> 20) % 0x3000);
}

static int open_tx(struct mdev *d, uint16_t port)
{
	struct roce_udp_port_opts o = { .sndbuf = 4 << 20, .rcvbuf = 64 << 10 };
	int err;

	if (d->net.ntx >= NET_MAX_SOCKS)
		return -ENOSPC;
	err = roce_udp_port_open(&d->net.tx[d->net.ntx], d->cfg.ipv4, port, &o);
	if (err)
		return err;
	return (int)d->net.ntx++;
}

int net_open(struct mdev *d, const char *pcap_path)
{
	struct mnet *n = &d->net;
	struct roce_udp_port_opts o = { .rcvbuf = 8 << 20, .sndbuf = 4 << 20 };
	uint16_t p = base_port(d);
	int err;

	n->rx_port.fd = -1;
	err = roce_udp_port_open(&n->rx_port, d->cfg.ipv4, d->cfg.udp_port, &o);
	if (err)
		return err;
	/* the source-port pool: the first free ports from a per-address starting point */
	for (unsigned int tries = 0; n->ntx < d->cfg.src_ports && tries < 4096; tries++) {
		err = open_tx(d, p);
		p = p == 0xffff ? 0xc000 : p + 1;
		if (err < 0 && err != -EADDRINUSE)
			return err;
	}
	if (!n->ntx)
		return -EADDRINUSE;
	n->tx_slot = calloc(NET_TX_SLOTS, sizeof(*n->tx_slot));
	n->rx = calloc(NET_RX_SLOTS, sizeof(*n->rx));
	n->slab = malloc((size_t)(NET_TX_SLOTS + NET_RX_SLOTS) * NET_SLOT_SIZE);
	if (!n->tx_slot || !n->rx || !n->slab)
		return -ENOMEM;
	for (unsigned int i = 0; i < NET_TX_SLOTS; i++)
		n->tx_slot[i].bounce = n->slab + (size_t)i * NET_SLOT_SIZE;
	for (unsigned int i = 0; i < NET_RX_SLOTS; i++)
		n->rx[i].buf = n->slab + (size_t)(NET_TX_SLOTS + i) * NET_SLOT_SIZE;
	if (pcap_path) {
		n->pcap = roce_pcap_open(pcap_path, ROCE_PCAP_LINKTYPE_ETHERNET);
		if (!n->pcap)
			return -errno;
	}
	return 0;
}

void net_close(struct mdev *d)
{
	struct mnet *n = &d->net;

	roce_udp_port_close(&n->rx_port);
	for (unsigned int i = 0; i < n->ntx; i++)
		roce_udp_port_close(&n->tx[i]);
	n->ntx = 0;
	if (n->pcap)
		roce_pcap_close(n->pcap);
	n->pcap = NULL;
	dmab_free(&n->tx_dma);
	free(n->tx_slot);
	free(n->rx);
	free(n->slab);
	n->tx_slot = NULL;
	n->rx = NULL;
	n->slab = NULL;
}

uint16_t net_sport_for(struct mdev *d, uint32_t qpn, uint16_t want, int *sock)
{
	struct mnet *n = &d->net;

	if (want && cx4_get(d->cap_cur[2], CX4_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT)) {
		int s;

		for (unsigned int i = 0; i < n->ntx; i++) {
			if (n->tx[i].port == want) {
				*sock = (int)i;
				return want;
			}
		}
		s = open_tx(d, want);
		if (s >= 0) {
			*sock = s;
			return want;
		}
		mdev_log(d, "QP 0x%x: UDP source port %u unavailable, using the pool", qpn, want);
	}
	/* rxe picks 0xC000 + hash_32(qpn, 14); we pick one of our sockets by the same idea */
	*sock = (int)(((qpn * 2654435761u) >> 16) % (d->cfg.src_ports < n->ntx ?
						      d->cfg.src_ports : n->ntx));
	return n->tx[*sock].port;
}

/* ---- transmit ---------------------------------------------------------------------------------- */

unsigned int net_tx_free_slots(const struct mdev *d)
{
	return NET_TX_SLOTS - (d->net.tx_tail - d->net.tx_head);
}

struct txpkt *net_tx_get(struct mdev *d)
{
	struct txpkt *t;

	if (!net_tx_free_slots(d))
		return NULL;
	t = &d->net.tx_slot[d->net.tx_tail % NET_TX_SLOTS];
	t->qp = NULL;
	t->swq_pos = -1;
	t->last = false;
	t->iovcnt = 0;
	t->plen = 0;
	t->faulted = false;
	t->ready = false;
	t->zcopy = false;
	return t;
}

int net_tx_hdr(struct mdev *d, struct txpkt *t, const struct roce_tx_hdr *h, uint32_t plen,
	       uint32_t daddr, uint16_t sock, uint8_t tos, uint8_t ttl)
{
	int hl = roce_write_hdrs(t->hdr, sizeof(t->hdr), h, plen);

	(void)d;
	if (hl < 0)
		return hl;
	t->hlen = (uint8_t)hl;
	t->iov[0] = (struct iovec){ .iov_base = t->hdr, .iov_len = (size_t)hl };
	t->iovcnt = 1;
	t->daddr = daddr;
	t->sock = sock;
	t->tos = tos;
	t->ttl = ttl;
	return 0;
}

int net_tx_payload(struct mdev *d, struct txpkt *t, const struct dseg *s, int n,
		   uint32_t off)
{
	uint64_t tag = d->net.tx_tail;

	for (int i = 0; i < n; i++) {
		if (off + s[i].len > NET_SLOT_SIZE)
			return -EINVAL;
		if (s[i].host && t->iovcnt < NET_MAX_IOV - 1) {
			t->iov[t->iovcnt++] = (struct iovec){ .iov_base = s[i].host,
							      .iov_len = s[i].len };
			t->zcopy = true;
		} else {
			if (s[i].host)
				memcpy(t->bounce + off, s[i].host, s[i].len);
			else
				dseg_copy_batched(&d->net.tx_dma, &s[i], 1, t->bounce + off, tag);
			if (t->iovcnt > 1 && (uint8_t *)t->iov[t->iovcnt - 1].iov_base +
			    t->iov[t->iovcnt - 1].iov_len == t->bounce + off)
				t->iov[t->iovcnt - 1].iov_len += s[i].len;
			else
				t->iov[t->iovcnt++] = (struct iovec){ .iov_base = t->bounce + off,
								      .iov_len = s[i].len };
		}
		off += (uint32_t)s[i].len;
		t->plen += (uint32_t)s[i].len;
	}
	return 0;
}

void net_tx_copy(struct txpkt *t, const void *src, uint32_t len, uint32_t off)
{
	memcpy(t->bounce + off, src, len);
	if (t->iovcnt > 1 && (uint8_t *)t->iov[t->iovcnt - 1].iov_base +
	    t->iov[t->iovcnt - 1].iov_len == t->bounce + off)
		t->iov[t->iovcnt - 1].iov_len += len;
	else
		t->iov[t->iovcnt++] = (struct iovec){ .iov_base = t->bounce + off, .iov_len = len };
	t->plen += len;
}

void net_tx_commit(struct mdev *d, struct txpkt *t)
{
	(void)t;
	d->net.tx_tail++;
}

void net_tx_materialize(struct mdev *d)
{
	struct mnet *n = &d->net;

	for (uint32_t i = n->tx_head; i != n->tx_tail; i++) {
		struct txpkt *t = &n->tx_slot[i % NET_TX_SLOTS];
		uint8_t tmp[NET_SLOT_SIZE];
		int end = t->ready ? t->iovcnt - 1 : t->iovcnt, k = 1;
		uint32_t off = 0;

		if (!t->zcopy)
			continue;
		/* iov: [0] headers, [1, end) payload, [end] tail when ready */
		for (int j = 1; j < end; j++) {
			memcpy(tmp + off, t->iov[j].iov_base, t->iov[j].iov_len);
			off += (uint32_t)t->iov[j].iov_len;
		}
		memcpy(t->bounce, tmp, off);
		if (off)
			t->iov[k++] = (struct iovec){ .iov_base = t->bounce, .iov_len = off };
		if (t->ready)
			t->iov[k++] = (struct iovec){ .iov_base = t->tail, .iov_len = t->tlen };
		t->iovcnt = k;
		t->zcopy = false;
	}
}

static void tx_fault(void *ctx, uint64_t tag)
{
	struct mdev *d = ctx;
	struct txpkt *t = &d->net.tx_slot[tag % NET_TX_SLOTS];

	t->faulted = true;
	d->stats.dma_faults++;
}

static void pkt_addr(const struct mdev *d, const struct txpkt *t, struct roce_addr *a)
{
	*a = (struct roce_addr){
		.saddr = d->cfg.ipv4,
		.daddr = t->daddr,
		.sport = d->net.tx[t->sock].port,
		.dport = d->cfg.udp_port,
		.tos = t->tos,
		.ttl = t->ttl ? t->ttl : 64,
		.ip_id = 0,
	};
}


int net_tx_flush(struct mdev *d)
{
	struct mnet *n = &d->net;
	struct roce_udp_tx tx[ROCE_UDP_BATCH];
	uint32_t at;
	int sent = 0;

	if (n->tx_head == n->tx_tail)
		return 0;
	if (n->tx_dma.n)
		dmab_flush(&n->tx_dma, tx_fault, d);
	/* Tails (pad + ICRC over the header the kernel will write). */
	for (at = n->tx_head; at != n->tx_tail; at++) {
		struct txpkt *t = &n->tx_slot[at % NET_TX_SLOTS];
		struct roce_addr a;
		int tl;

		if (t->ready || t->faulted)
			continue;
		pkt_addr(d, t, &a);
		tl = roce_write_tail(t->tail, &a, t->iov, t->iovcnt);
		if (tl < 0) {
			t->faulted = true;
			continue;
		}
		t->tlen = (uint8_t)tl;
		t->iov[t->iovcnt++] = (struct iovec){ .iov_base = t->tail, .iov_len = (size_t)tl };
		t->ready = true;
	}
	while (n->tx_head != n->tx_tail) {
		unsigned int k = 0;
		uint16_t sock = 0;
		int r;

		/* one sendmmsg per run of packets leaving from the same socket */
		for (at = n->tx_head; at != n->tx_tail && k < ROCE_UDP_BATCH; at++) {
			struct txpkt *t = &n->tx_slot[at % NET_TX_SLOTS];

			if (t->faulted) {
				if (!k) {
					n->tx_head++;
					if (t->qp)
						qp_tx_fault(d, t->qp, t->swq_pos);
					continue;
				}
				break;
			}
			if (k && t->sock != sock)
				break;
			sock = t->sock;
			tx[k++] = (struct roce_udp_tx){ .iov = t->iov, .iovcnt = t->iovcnt,
							.daddr = t->daddr, .dport = d->cfg.udp_port,
							.tos = t->tos, .ttl = t->ttl };
		}
		if (!k)
			continue;
		r = roce_udp_send(&n->tx[sock], tx, k);
		if (r < 0) {
			/* EMSGSIZE (over the path MTU) or a dead route: the network drops it */
			struct txpkt *t = &n->tx_slot[n->tx_head % NET_TX_SLOTS];

			mdev_log(d, "send: %s (packet of %u bytes dropped)", strerror(-r),
				 t->hlen + t->plen + t->tlen);
			n->tx_head++;
			continue;
		}
		for (int i = 0; i < r; i++) {
			struct txpkt *t = &n->tx_slot[(n->tx_head + (uint32_t)i) % NET_TX_SLOTS];

			d->stats.tx_pkts++;
			d->stats.tx_bytes += t->hlen + t->plen + t->tlen;
			/* UC/UD: a WQE is complete once its last packet has left */
			if (t->qp && t->last && t->swq_pos >= 0 && t->qp->st != CX4_QP_ST_RC)
				comp_sent(d, t->qp, (uint32_t)t->swq_pos);
			if (n->pcap) {
				struct roce_addr a;

				pkt_addr(d, t, &a);
				roce_pcap_write_udp(n->pcap, &a, t->iov, t->iovcnt);
			}
		}
		n->tx_head += (uint32_t)r;
		sent += r;
		if ((unsigned int)r < k) {
			n->tx_blocked = true;	/* socket buffer full: wait for POLLOUT */
			break;
		}
	}
	if (n->tx_head == n->tx_tail)
		n->tx_blocked = false;
	if (n->pcap)
		roce_pcap_flush(n->pcap);
	return sent;
}

/* ---- receive ----------------------------------------------------------------------------------- */

static bool opcode_fits_qp(uint8_t opcode, uint8_t st)
{
	switch (opcode & ROCE_TRANSPORT_MASK) {
	case ROCE_TRANSPORT_RC:
		return st == CX4_QP_ST_RC;
	case ROCE_TRANSPORT_UC:
		return st == CX4_QP_ST_UC;
	case ROCE_TRANSPORT_UD:
		return st == CX4_QP_ST_UD;
	default:
		return false;
	}
}

int net_rx(struct mdev *d)
{
	struct mnet *n = &d->net;
	struct roce_udp_rx rx[NET_RX_SLOTS];
	int got;

	/* headroom in front of each datagram: the responder builds a UD GRH there (resp.c) */
	for (unsigned int i = 0; i < NET_RX_SLOTS; i++)
		rx[i] = (struct roce_udp_rx){ .buf = n->rx[i].buf + NET_RX_HEADROOM,
					      .size = NET_SLOT_SIZE - NET_RX_HEADROOM };
	got = roce_udp_recv(&n->rx_port, rx, NET_RX_SLOTS);
	if (got <= 0)
		return 0;
	for (int i = 0; i < got; i++) {
		struct roce_pkt pkt;
		struct mqp *qp;
		int err;

		d->stats.rx_pkts++;
		d->stats.rx_bytes += rx[i].len;
		rx[i].addr.ip_id = 0;
		if (rx[i].truncated) {
			d->stats.rx_drop_icrc++;
			continue;
		}
		err = roce_parse_udp(rx[i].buf, rx[i].len, &rx[i].addr, ROCE_PARSE_SOLVE_ID, &pkt);
		if (n->pcap) {
			struct iovec v = { .iov_base = rx[i].buf, .iov_len = rx[i].len };
			struct roce_addr a = err ? rx[i].addr : pkt.addr;

			roce_pcap_write_udp(n->pcap, &a, &v, 1);
		}
		if (err) {
			d->stats.rx_drop_icrc++;
			mdev_log(d, "rx: dropped datagram from port %u: %s", rx[i].addr.sport,
				 roce_strerror(err));
			continue;
		}
		qp = qp_get(d, pkt.dqpn);
		if (!qp || !opcode_fits_qp(pkt.opcode, qp->st) || !vport_roce_enabled(d) ||
		    d->port_oper != CX4_PORT_STATUS_UP) {
			d->stats.rx_drop_qp++;
			continue;
		}
		if (n->drop_rx) {
			n->drop_rx--;
			d->stats.rx_drop_qp++;
			continue;
		}
		if (pkt.info->flags & ROCE_F_REQ)
			resp_rx(d, qp, &pkt);
		else
			comp_rx(d, qp, &pkt);
	}
	if (n->pcap)
		roce_pcap_flush(n->pcap);
	return got;
}
