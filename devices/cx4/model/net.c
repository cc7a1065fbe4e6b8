// SPDX-License-Identifier: MIT
/*
 * The wire of one modelled port: RoCE v2 over UDP (IBTA Annex A17), through the wire library
 * (devices/cx4/wire: headers, ICRC, parse, pcap, UDP sockets; docs/roce-wire.md).
 *
 * Transmit: the requester and responder build packets in a queue of slots. Headers come from
 * roce_write_hdrs; the payload either points into fd-backed host memory (zero copy) or is
 * read into the slot's own buffer, with one process_vm_readv for all the slots of a pass
 * (dma_batch). At the end of the pass the queue goes out with sendmmsg, and runs of equal-size
 * packets to the same destination become one UDP GSO send (UDP_SEGMENT: the kernel cuts the
 * datagram, segment i leaving with IPv4 ID i, so each packet's ICRC is computed with that ID).
 * On this machine GSO moves 4 KB datagrams 3.6x faster than one datagram per packet
 * (bench/bv_baseline udp-bw 4096). Sockets with GSO must send real UDP checksums (Linux
 * refuses UDP_SEGMENT with SO_NO_CHECK); the ICRC masks them, RoCE v2 allows them.
 * Per-QP UDP source ports give the flow entropy ECMP networks expect (roce_cap
 * r_roce_min/max_src_udp_port): a pool of sockets bound to ports in 0xC000..0xFFFF.
 *
 * Receive: one socket bound to IP:4791 with UDP GRO; recvmmsg takes up to 32 buffers of up to
 * 64 KB per system call, each split into its datagrams, each parsed and checked (framing,
 * ICRC: first with the IPv4 ID the segment position implies, else solved for, as for rxe or a
 * real NIC), then handed to the responder (requests) or the completer (responses) of its QP.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "model.h"

#define TX_IOV_MAX 4096 /* iovs of one sendmmsg batch */
#define CABLE_RX_BATCH 64 /* frames from the cable per pass: one ACK request's worth */
#define UDP_MAX_PAYLOAD 65507

static uint16_t base_port(const struct mdev *d)
{
	uint32_t h = d->cfg.ipv4 * 2654435761u;

	return (uint16_t)(0xc000 + (h >> 20) % 0x3000);
}

static int open_tx(struct mdev *d, uint16_t port)
{
	struct roce_udp_port_opts o = {.sndbuf = 4 << 20, .rcvbuf = 64 << 10, .gso = true};
	int err;

	if (d->net.ntx >= NET_MAX_SOCKS)
		return -ENOSPC;
	err = roce_udp_port_open(&d->net.tx[d->net.ntx], d->cfg.ipv4, port, &o);
	if (err)
		return err;
	return (int)d->net.ntx++;
}

int net_open(struct mdev *d, const char *pcap_path, const char *cable_dir)
{
	struct mnet *n = &d->net;
	struct roce_udp_port_opts o = {.rcvbuf = 8 << 20, .sndbuf = 4 << 20, .gro = true};
	uint16_t p = base_port(d);
	size_t slab;
	int err;

	n->rx_port.fd = -1;
	n->blocked_sock = -1;
	err = cable_open(d, cable_dir);
	if (err)
		return err;
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
	n->tx_iov = calloc(TX_IOV_MAX, sizeof(*n->tx_iov));
	slab =
	    (size_t)NET_TX_SLOTS * NET_SLOT_SIZE + (size_t)NET_RX_SLOTS * NET_RX_BUF + NET_SCRATCH;
	n->slab = malloc(slab);
	if (!n->tx_slot || !n->tx_iov || !n->slab)
		return -ENOMEM;
	for (unsigned int i = 0; i < NET_TX_SLOTS; i++)
		n->tx_slot[i].bounce = n->slab + (size_t)i * NET_SLOT_SIZE;
	for (unsigned int i = 0; i < NET_RX_SLOTS; i++)
		n->rx_buf[i] =
		    n->slab + (size_t)NET_TX_SLOTS * NET_SLOT_SIZE + (size_t)i * NET_RX_BUF;
	n->scratch =
	    n->slab + (size_t)NET_TX_SLOTS * NET_SLOT_SIZE + (size_t)NET_RX_SLOTS * NET_RX_BUF;
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

	cable_close(d);
	roce_udp_port_close(&n->rx_port);
	for (unsigned int i = 0; i < n->ntx; i++)
		roce_udp_port_close(&n->tx[i]);
	n->ntx = 0;
	if (n->pcap)
		roce_pcap_close(n->pcap);
	n->pcap = NULL;
	dmab_free(&n->tx_dma);
	for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++) {
		free(n->held[i].buf);
		n->held[i].buf = NULL;
		n->held[i].after = 0;
	}
	n->nfault = 0;
	free(n->tx_slot);
	free(n->tx_iov);
	free(n->slab);
	n->tx_slot = NULL;
	n->tx_iov = NULL;
	n->slab = NULL;
}

uint16_t net_sport_for(struct mdev *d, uint32_t qpn, uint16_t want, bool av, int *sock)
{
	struct mnet *n = &d->net;

	/* a QP context's udp_sport counts once the driver enabled it; a UD AV's always does */
	if (want && (av || cx4_get(d->cap_cur[2], CX4_CAP_ROCE_SW_R_ROCE_SRC_UDP_PORT))) {
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
	*sock = (int)(((qpn * 2654435761u) >> 16) %
		      (d->cfg.src_ports < n->ntx ? d->cfg.src_ports : n->ntx));
	return n->tx[*sock].port;
}

uint8_t *net_scratch(struct mdev *d, size_t len)
{
	struct mnet *n = &d->net;
	uint8_t *p;

	if (len > NET_SCRATCH)
		return NULL;
	if (n->scratch_used + len > NET_SCRATCH) {
		/* full: the writes that point into it must land before it is reused */
		mdev_flush_rx_dma(d);
		n->scratch_used = 0;
	}
	p = n->scratch + n->scratch_used;
	n->scratch_used += (len + 63) & ~(size_t)63;
	return p;
}

/* ---- transmit ----------------------------------------------------------------------------------
 */

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
	t->iov[0] = (struct iovec){.iov_base = t->hdr, .iov_len = (size_t)hl};
	t->iovcnt = 1;
	t->daddr = daddr;
	t->sock = sock;
	t->tos = tos;
	t->ttl = ttl;
	return 0;
}

/* Copy the payload pieces that point into host memory into the bounce buffer (each byte at
 * its payload offset): the packet then has headers + one payload piece. */
static void collapse(struct txpkt *t)
{
	uint32_t off = 0;

	for (int j = 1; j < t->iovcnt; j++) {
		if ((uint8_t *)t->iov[j].iov_base != t->bounce + off)
			memmove(t->bounce + off, t->iov[j].iov_base, t->iov[j].iov_len);
		off += (uint32_t)t->iov[j].iov_len;
	}
	t->iovcnt = 1;
	if (off)
		t->iov[t->iovcnt++] = (struct iovec){.iov_base = t->bounce, .iov_len = off};
	t->zcopy = false;
}

static void append_bounce(struct txpkt *t, uint32_t off, uint32_t len)
{
	if (t->iovcnt > 1 &&
	    (uint8_t *)t->iov[t->iovcnt - 1].iov_base + t->iov[t->iovcnt - 1].iov_len ==
		t->bounce + off) {
		t->iov[t->iovcnt - 1].iov_len += len;
		return;
	}
	if (t->iovcnt >= NET_MAX_IOV) {
		/* too many pieces: one contiguous copy (the new bytes are already in place) */
		collapse(t);
		t->iov[1].iov_len += len;
		return;
	}
	t->iov[t->iovcnt++] = (struct iovec){.iov_base = t->bounce + off, .iov_len = len};
}

int net_tx_payload(struct mdev *d, struct txpkt *t, const struct dseg *s, int n, uint32_t off)
{
	uint64_t tag = d->net.tx_tail;

	for (int i = 0; i < n; i++) {
		if (off + s[i].len > NET_SLOT_SIZE)
			return -EINVAL;
		if (s[i].host && t->iovcnt < NET_MAX_IOV - 1) {
			t->iov[t->iovcnt++] =
			    (struct iovec){.iov_base = s[i].host, .iov_len = s[i].len};
			t->zcopy = true;
		} else {
			if (s[i].host)
				memcpy(t->bounce + off, s[i].host, s[i].len);
			else
				dseg_copy_batched(&d->net.tx_dma, &s[i], 1, t->bounce + off, tag);
			append_bounce(t, off, (uint32_t)s[i].len);
		}
		off += (uint32_t)s[i].len;
		t->plen += (uint32_t)s[i].len;
	}
	return 0;
}

void net_tx_copy(struct txpkt *t, const void *src, uint32_t len, uint32_t off)
{
	memcpy(t->bounce + off, src, len);
	append_bounce(t, off, len);
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
		if (t->zcopy)
			collapse(t);
	}
}

static void tx_fault(void *ctx, uint64_t tag)
{
	struct mdev *d = ctx;
	struct txpkt *t = &d->net.tx_slot[tag % NET_TX_SLOTS];

	t->faulted = true;
	d->stats.dma_faults++;
}

static void pkt_addr(const struct mdev *d, const struct txpkt *t, uint16_t ip_id,
		     struct roce_addr *a)
{
	*a = (struct roce_addr){
	    .saddr = d->cfg.ipv4,
	    .daddr = t->daddr,
	    .sport = d->net.tx[t->sock].port,
	    .dport = d->cfg.udp_port,
	    .tos = t->tos,
	    .ttl = t->ttl ? t->ttl : 64,
	    .ip_id = ip_id,
	};
}

/* UDP payload bytes of a packet: headers, payload, pad to 4, ICRC. */
static uint32_t pkt_len(const struct txpkt *t)
{
	return t->hlen + ((t->plen + 3) & ~3u) + ROCE_ICRC_LEN;
}

static void set_epollout(struct mdev *d, int sock)
{
	struct mnet *n = &d->net;
	struct epoll_event ev = {.data.fd = -1};

	if (n->blocked_sock == sock)
		return;
	if (n->blocked_sock >= 0) {
		ev.events = 0;
		ev.data.fd = n->tx[n->blocked_sock].fd;
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, ev.data.fd, &ev);
	}
	n->blocked_sock = sock;
	if (sock >= 0) {
		ev.events = EPOLLOUT;
		ev.data.fd = n->tx[sock].fd;
		epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	}
}

struct txgroup {
	uint32_t first, n;
};

/* A packet left (segment ip_id of its send): count it, capture it, complete UC/UD WQEs. */
static void tx_done(struct mdev *d, struct txpkt *t, uint16_t ip_id)
{
	struct mnet *n = &d->net;

	d->stats.tx_pkts++;
	d->stats.tx_bytes += pkt_len(t);
	if (n->pcap) {
		struct roce_addr a;

		pkt_addr(d, t, ip_id, &a);
		t->iov[t->iovcnt] =
		    (struct iovec){.iov_base = t->tail, .iov_len = pkt_len(t) - t->hlen - t->plen};
		roce_pcap_write_udp(n->pcap, &a, t->iov, t->iovcnt + 1);
	}
	/* UC/UD: a WQE is complete once its last packet has left */
	if (t->qp && t->last && t->swq_pos >= 0 && t->qp->st != CX4_QP_ST_RC)
		comp_sent(d, t->qp, (uint32_t)t->swq_pos);
}

/* The packets at the head of the queue that go to the cable's other end; *full when its ring
 * has no room (it wakes us when it has). */
static int tx_cable(struct mdev *d, uint32_t peer, bool *full)
{
	struct mnet *n = &d->net;
	int sent = 0;

	while (n->tx_head != n->tx_tail) {
		struct txpkt *t = &n->tx_slot[n->tx_head % NET_TX_SLOTS];
		struct roce_addr a;
		int tl, err;

		if (t->faulted || t->daddr != peer)
			break;
		/* a packet sent alone leaves with IPv4 ID 0 (DF set), as from the UDP socket */
		pkt_addr(d, t, 0, &a);
		tl = roce_write_tail(t->tail, &a, t->iov, t->iovcnt);
		if (tl < 0) {
			t->faulted = true;
			break;
		}
		t->iov[t->iovcnt] = (struct iovec){.iov_base = t->tail, .iov_len = (size_t)tl};
		err = cable_put(d, &a, t->iov, t->iovcnt + 1, pkt_len(t));
		if (err == -EAGAIN) {
			*full = true;
			break;
		}
		if (err) {
			mdev_log(d, "cable: %u-byte packet not sent: %s", pkt_len(t),
				 strerror(-err));
		} else {
			tx_done(d, t, 0);
			sent++;
		}
		n->tx_head++;
	}
	cable_publish(d);
	return sent;
}

int net_tx_flush(struct mdev *d)
{
	struct mnet *n = &d->net;
	struct roce_udp_tx tx[ROCE_UDP_BATCH];
	struct txgroup grp[ROCE_UDP_BATCH];
	uint32_t peer;
	int sent = 0;

	if (n->tx_head == n->tx_tail) {
		set_epollout(d, -1);
		return 0;
	}
	if (n->tx_dma.n)
		dmab_flush(&n->tx_dma, tx_fault, d);
	if (d->port_oper != CX4_PORT_STATUS_UP || !vport_roce_enabled(d)) {
		/* no link (or RoCE off): what would go out is lost, as on a card with its cable
		 * pulled; reliable connections find out by their retry counters */
		d->stats.tx_dropped += n->tx_tail - n->tx_head;
		n->tx_head = n->tx_tail;
		set_epollout(d, -1);
		return 0;
	}
	peer = cable_peer(d);
	while (n->tx_head != n->tx_tail) {
		uint32_t at = n->tx_head, niov = 0;
		unsigned int k = 0;
		uint16_t sock;
		int r;

		/* a packet whose payload faulted is not sent: its QP learns it */
		if (n->tx_slot[at % NET_TX_SLOTS].faulted) {
			struct txpkt *t = &n->tx_slot[at % NET_TX_SLOTS];

			n->tx_head++;
			if (t->qp)
				qp_tx_fault(d, t->qp, t->swq_pos);
			continue;
		}
		if (peer && n->tx_slot[at % NET_TX_SLOTS].daddr == peer) {
			bool full = false;

			sent += tx_cable(d, peer, &full);
			if (full)
				break;
			continue;
		}
		sock = n->tx_slot[at % NET_TX_SLOTS].sock;
		/* groups of equal-size packets to one destination, for one sendmmsg */
		while (at != n->tx_tail && k < ROCE_UDP_BATCH) {
			struct txpkt *f = &n->tx_slot[at % NET_TX_SLOTS];
			uint32_t size = pkt_len(f), bytes = 0, cnt = 0, iov0 = niov;

			if (f->faulted || f->sock != sock || (peer && f->daddr == peer))
				break;
			while (at != n->tx_tail) {
				struct txpkt *t = &n->tx_slot[at % NET_TX_SLOTS];
				uint32_t len = pkt_len(t);
				struct roce_addr a;
				int tl;

				if (cnt &&
				    (t->faulted || t->sock != sock || t->daddr != f->daddr ||
				     t->tos != f->tos || t->ttl != f->ttl || len > size ||
				     bytes + len > UDP_MAX_PAYLOAD || cnt == NET_GSO_MAX_SEGS))
					break;
				if (niov + (uint32_t)t->iovcnt + 1 > TX_IOV_MAX)
					break;
				/* segment cnt of a GSO send leaves with IPv4 ID cnt */
				pkt_addr(d, t, (uint16_t)cnt, &a);
				tl = roce_write_tail(t->tail, &a, t->iov, t->iovcnt);
				if (tl < 0) {
					t->faulted = true;
					break;
				}
				memcpy(&n->tx_iov[niov], t->iov,
				       (size_t)t->iovcnt * sizeof(*t->iov));
				niov += (uint32_t)t->iovcnt;
				n->tx_iov[niov++] =
				    (struct iovec){.iov_base = t->tail, .iov_len = (size_t)tl};
				bytes += len;
				cnt++;
				at++;
				if (len < size)
					break; /* a shorter packet ends a GSO run */
			}
			if (!cnt)
				break;
			tx[k] = (struct roce_udp_tx){.iov = &n->tx_iov[iov0],
						     .iovcnt = (int)(niov - iov0),
						     .daddr = f->daddr,
						     .dport = d->cfg.udp_port,
						     .tos = f->tos,
						     .ttl = f->ttl,
						     .gso_size = cnt > 1 ? (uint16_t)size : 0};
			grp[k].first = at - cnt;
			grp[k].n = cnt;
			k++;
		}
		if (!k)
			continue;
		r = roce_udp_send(&n->tx[sock], tx, k);
		if (r < 0) {
			/* EMSGSIZE (over the link MTU) or no route: the network drops it */
			mdev_log(d, "send: %s (%u packets dropped)", strerror(-r), grp[0].n);
			n->tx_head += grp[0].n;
			continue;
		}
		for (int g = 0; g < r; g++) {
			for (uint32_t i = 0; i < grp[g].n; i++)
				tx_done(d, &n->tx_slot[(grp[g].first + i) % NET_TX_SLOTS],
					(uint16_t)i);
			n->tx_head += grp[g].n;
			sent += (int)grp[g].n;
		}
		if ((unsigned int)r < k) {
			set_epollout(d, sock); /* socket buffer full: wait for POLLOUT */
			break;
		}
	}
	if (n->tx_head == n->tx_tail)
		set_epollout(d, -1);
	if (n->pcap)
		roce_pcap_flush(n->pcap);
	return sent;
}

/* ---- receive -----------------------------------------------------------------------------------
 */

static bool opcode_fits_qp(uint8_t opcode, uint8_t st)
{
	switch (opcode & ROCE_TRANSPORT_MASK) {
	case ROCE_TRANSPORT_RC:
		return st == CX4_QP_ST_RC;
	case ROCE_TRANSPORT_UC:
		return st == CX4_QP_ST_UC;
	case ROCE_TRANSPORT_UD:
		return st == CX4_QP_ST_UD || st == CX4_QP_ST_QP1;
	default:
		return false;
	}
}

/* ---- receive-side impairment (cx4_model_rx_fault) ------------------------------------------- */

int net_set_fault(struct mdev *d, const struct cx4_model_fault *f)
{
	struct mnet *n = &d->net;

	if (!f) {
		n->nfault = 0;
		/* what is held comes out at the next receive */
		for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++)
			if (n->held[i].after)
				n->held[i].after = 1;
		return 0;
	}
	if (f->action < CX4_MODEL_FAULT_DROP || f->action > CX4_MODEL_FAULT_DELAY ||
	    f->op_min > f->op_max || f->qpn > ROCE_PSN_MASK ||
	    (f->action == CX4_MODEL_FAULT_DELAY && (!f->delay || f->delay > 64)))
		return -EINVAL;
	if (n->nfault == CX4_MODEL_FAULT_RULES)
		return -ENOSPC;
	if (f->action == CX4_MODEL_FAULT_DELAY) {
		for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++) {
			if (!n->held[i].buf)
				n->held[i].buf = malloc(NET_RX_BUF);
			if (!n->held[i].buf)
				return -ENOMEM;
		}
	}
	n->fault[n->nfault++] = (struct net_fault){.f = *f};
	return 0;
}

/* The first rule that takes this packet, or NULL. */
static const struct cx4_model_fault *fault_match(struct mdev *d, const struct roce_pkt *p)
{
	struct mnet *n = &d->net;

	for (unsigned int i = 0; i < n->nfault; i++) {
		struct net_fault *r = &n->fault[i];

		if (p->opcode < r->f.op_min || p->opcode > r->f.op_max ||
		    (r->f.qpn && r->f.qpn != p->dqpn) || r->seen >= r->f.skip + r->f.count)
			continue;
		if (r->seen++ < r->f.skip)
			continue;
		return &r->f;
	}
	return NULL;
}

/* Keep a copy of the datagram to deliver later; false when every slot is taken. */
static bool fault_hold(struct mdev *d, const uint8_t *buf, size_t len, const struct roce_addr *a,
		       uint32_t delay)
{
	struct mnet *n = &d->net;

	for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++) {
		struct net_held *h = &n->held[i];

		if (h->after || !h->buf || len > NET_RX_BUF)
			continue;
		memcpy(h->buf, buf, len);
		h->len = len;
		h->addr = *a;
		h->after = delay;
		return true;
	}
	return false;
}

static void rx_deliver(struct mdev *d, const uint8_t *buf, size_t len, struct roce_addr *addr,
		       bool late);

/* A packet was delivered: held ones whose turn has come follow it. all: release everything. */
static void fault_release(struct mdev *d, bool all)
{
	struct mnet *n = &d->net;

	for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++) {
		struct net_held *h = &n->held[i];
		uint8_t *copy;

		if (!h->after || (!all && --h->after))
			continue;
		h->after = 0;
		/*
		 * The responder's writes point into the packet until the end of the pass: deliver
		 * from memory that lives that long, so the slot can take the next packet at once.
		 */
		copy = net_scratch(d, h->len);
		if (!copy)
			continue;
		memcpy(copy, h->buf, h->len);
		d->stats.rx_fault_delayed++;
		rx_deliver(d, copy, h->len, &h->addr, true);
	}
}

static bool fault_any_held(const struct mdev *d)
{
	for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++)
		if (d->net.held[i].after)
			return true;
	return false;
}

static void rx_one(struct mdev *d, const uint8_t *buf, size_t len, struct roce_addr *addr)
{
	d->stats.rx_pkts++;
	d->stats.rx_bytes += len;
	rx_deliver(d, buf, len, addr, false);
}

/* Parse, check and dispatch one datagram; late: a held packet (no rule applies again). */
static void rx_deliver(struct mdev *d, const uint8_t *buf, size_t len, struct roce_addr *addr,
		       bool late)
{
	struct mnet *n = &d->net;
	const struct cx4_model_fault *rule = NULL;
	struct roce_pkt pkt;
	struct mqp *qp;
	int err, act;

	err = roce_parse_udp(buf, len, addr, ROCE_PARSE_SOLVE_ID, &pkt);
	if (n->pcap && !late) {
		struct iovec v = {.iov_base = (void *)buf, .iov_len = len};

		roce_pcap_write_udp(n->pcap, err ? addr : &pkt.addr, &v, 1);
	}
	if (err) {
		d->stats.rx_drop_icrc++;
		mdev_log(d, "rx: dropped datagram from port %u: %s", addr->sport,
			 roce_strerror(err));
		return;
	}
	/* QP1 is the GSI QP's wherever its context lives ([IBTA] 13.4.6.1) */
	qp = pkt.dqpn == 1 ? d->gsi : qp_get(d, pkt.dqpn);
	if (!qp || !opcode_fits_qp(pkt.opcode, qp->st) || !vport_roce_enabled(d) ||
	    d->port_oper != CX4_PORT_STATUS_UP) {
		d->stats.rx_drop_qp++;
		return;
	}
	if (n->drop_rx && !late) {
		n->drop_rx--;
		d->stats.rx_drop_qp++;
		return;
	}
	if (n->nfault && !late)
		rule = fault_match(d, &pkt);
	act = rule ? (int)rule->action : 0;
	if (act == CX4_MODEL_FAULT_DROP) {
		d->stats.rx_fault_dropped++;
		return;
	}
	/* held: delivered later with the IPv4 ID the ICRC matched (pkt.addr); no slot: now */
	if (act == CX4_MODEL_FAULT_DELAY && fault_hold(d, buf, len, &pkt.addr, rule->delay))
		return;
	for (int k = 0; k < (act == CX4_MODEL_FAULT_DUP ? 2 : 1); k++) {
		if (pkt.info->flags & ROCE_F_REQ)
			resp_rx(d, qp, &pkt);
		else
			comp_rx(d, qp, &pkt);
	}
	if (act == CX4_MODEL_FAULT_DUP)
		d->stats.rx_fault_duplicated++;
	if (!late && fault_any_held(d))
		fault_release(d, false);
}

/* Frames from the cable's other end (at most as many as 32 full GRO buffers hold). */
static int rx_cable(struct mdev *d)
{
	const uint8_t *buf;
	struct roce_addr a;
	size_t len;
	int got = 0;

	cable_peer(d); /* join an end that appeared, let go of one that left */
	while (got < CABLE_RX_BATCH && (buf = cable_next(d, &a, &len))) {
		rx_one(d, buf, len, &a);
		got++;
	}
	return got;
}

int net_rx(struct mdev *d)
{
	struct mnet *n = &d->net;
	struct roce_udp_rx rx[NET_RX_SLOTS];
	int got, cabled = rx_cable(d);

	/* headroom in front of each buffer: the responder builds a UD GRH there (resp.c) */
	for (unsigned int i = 0; i < NET_RX_SLOTS; i++)
		rx[i] = (struct roce_udp_rx){.buf = n->rx_buf[i] + NET_RX_HEADROOM,
					     .size = NET_RX_BUF - NET_RX_HEADROOM};
	got = roce_udp_recv(&n->rx_port, rx, NET_RX_SLOTS);
	if (got <= 0) {
		/* nothing new arrives: the impaired link lets go of what it held */
		if (!cabled && fault_any_held(d)) {
			fault_release(d, true);
			return 1;
		}
		if (cabled && n->pcap)
			roce_pcap_flush(n->pcap);
		return cabled;
	}
	for (int i = 0; i < got; i++) {
		size_t seg = rx[i].seg_size ? rx[i].seg_size : rx[i].len;

		if (rx[i].truncated || !seg) {
			d->stats.rx_drop_icrc++;
			continue;
		}
		/* a GRO buffer holds the segments of one GSO send: segment k had IPv4 ID k */
		for (size_t off = 0, k = 0; off < rx[i].len; off += seg, k++) {
			struct roce_addr a = rx[i].addr;

			a.ip_id = (uint16_t)k;
			rx_one(d, rx[i].buf + off, rx[i].len - off < seg ? rx[i].len - off : seg,
			       &a);
		}
	}
	if (n->pcap)
		roce_pcap_flush(n->pcap);
	return got + cabled;
}

void net_rx_done(struct mdev *d)
{
	cable_rx_done(d);
}

void net_sleeping(struct mdev *d, bool sleeping)
{
	cable_sleeping(d, sleeping);
	if (!sleeping)
		cable_drain_wake(d);
}
