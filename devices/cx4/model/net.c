// SPDX-License-Identifier: MIT
/*
 * The wire of one modelled port, through the wire library (devices/cx4/wire: headers, ICRC,
 * parse, pcap, sockets; docs/roce-wire.md). A packet's network type is that of the GID table
 * entry it leaves from (src_addr_index: roce_version, l3_type), and its medium is chosen when
 * it leaves (route_of):
 *   to one of our own GIDs           the device's loopback (frames in a ring, next pass)
 *   to the cable's other end's MAC   the cable (cable.c): Ethernet frames in shared memory
 *   RoCE v1 (GRH, Ethertype 0x8915)  an AF_PACKET socket on the Ethernet net device
 *   RoCE v2 over IPv4                the kernel's UDP sockets (below)
 *   RoCE v2 over IPv6                the UDP socket bound to the source address
 * and a packet none of them carries is dropped (the GID table lists no such entry unless a
 * medium carries it: cx4m_net_gid_set refuses it).
 *
 * RoCE v2 over IPv4 through UDP (IBTA Annex A17):
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
#include <ifaddrs.h>
#include <netinet/in.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

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

/* ---- the GID table and the media that carry it -------------------------------------------- */

uint8_t cx4m_net_type_of(const struct mroce_addr *a)
{
	if (a->version == CX4_ROCE_VERSION_1)
		return ROCE_NET_GRH;
	return a->l3_type == CX4_ROCE_L3_TYPE_IPV4 ? ROCE_NET_IPV4 : ROCE_NET_IPV6;
}

bool cx4m_net_rgid_ok(uint8_t net, const uint8_t rgid[16])
{
	switch (net) {
	case ROCE_NET_IPV4:
		return roce_gid_is_v4mapped(rgid);
	case ROCE_NET_IPV6:
		return !roce_gid_is_v4mapped(rgid);
	default:
		return true;
	}
}

bool cx4m_net_has_ethernet(const struct mdev *d)
{
	return d->net.cable.rx || d->net.raw.fd >= 0;
}

/*
 * RoCE v1 frames need an Ethernet device: an AF_PACKET socket on the configured net device,
 * when it is one (not the loopback). Without it (no device, no CAP_NET_RAW) the port carries
 * no RoCE v1 except over its cable, and its capabilities say so.
 */
static void raw_open(struct mdev *d)
{
	struct ifreq ifr = {0};
	int s, err;

	if (!d->cfg.netdev || strlen(d->cfg.netdev) >= sizeof(ifr.ifr_name))
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", d->cfg.netdev);
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return;
	err = ioctl(s, SIOCGIFHWADDR, &ifr);
	close(s);
	if (err || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER)
		return;
	err = roce_packet_port_open(&d->net.raw, d->cfg.netdev, ROCE_ETHERTYPE_ROCE);
	if (err)
		cx4m_mdev_log(d, "RoCE v1 on %s: %s (RoCE v2 only)", d->cfg.netdev, strerror(-err));
}

static bool is_link_local(const uint8_t gid[16])
{
	return gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80;
}

/*
 * The interface an IPv6 address is assigned to (tentative ones included: the socket binds
 * with IPV6_FREEBIND), on the net device when the port has one. 0 = not assigned here.
 */
static unsigned int ipv6_ifindex(const struct mdev *d, const uint8_t addr[16])
{
	struct ifaddrs *ifa, *i;
	unsigned int idx = 0;

	if (getifaddrs(&ifa))
		return 0;
	for (i = ifa; i && !idx; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET6 ||
		    memcmp(&((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, addr, 16) ||
		    (d->cfg.netdev && strcmp(i->ifa_name, d->cfg.netdev)))
			continue;
		idx = if_nametoindex(i->ifa_name);
	}
	freeifaddrs(ifa);
	return idx;
}

static int udp6_find(const struct mdev *d, const uint8_t addr[16])
{
	for (int i = 0; i < NET_MAX_UDP6; i++)
		if (d->net.udp6[i].rx.fd >= 0 && !memcmp(d->net.udp6[i].rx.addr6, addr, 16))
			return i;
	return -1;
}

/* The sockets of an IPv6 source address: 0, -EADDRNOTAVAIL (not ours), -ENOSPC, -errno. */
static int udp6_get(struct mdev *d, const uint8_t addr[16])
{
	struct roce_udp_port_opts rxo = {.rcvbuf = 8 << 20, .sndbuf = 1 << 20, .gro = true};
	struct roce_udp_port_opts txo = {.rcvbuf = 64 << 10, .sndbuf = 4 << 20, .gso = true};
	unsigned int scope = ipv6_ifindex(d, addr);
	int i = udp6_find(d, addr), err;
	struct mudp6 *u;

	if (i >= 0) {
		d->net.udp6[i].users++;
		return 0;
	}
	if (!scope)
		return -EADDRNOTAVAIL;
	for (i = 0; i < NET_MAX_UDP6 && d->net.udp6[i].rx.fd >= 0; i++)
		;
	if (i == NET_MAX_UDP6)
		return -ENOSPC;
	u = &d->net.udp6[i];
	if (!is_link_local(addr))
		scope = 0;
	err = roce_udp_port_open6(&u->rx, addr, scope, d->cfg.udp_port, &rxo);
	if (!err) {
		/* one source port per address, in the RoCE range, as for the IPv4 pool */
		err = roce_udp_port_open6(&u->tx, addr, scope, base_port(d), &txo);
		if (err == -EADDRINUSE)
			err = roce_udp_port_open6(&u->tx, addr, scope, 0, &txo);
	}
	if (!err && d->epfd >= 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.fd = u->rx.fd};

		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, u->rx.fd, &ev))
			err = -errno;
	}
	if (err) {
		roce_udp_port_close(&u->rx);
		roce_udp_port_close(&u->tx);
		return err;
	}
	u->users = 1;
	return 0;
}

static void udp6_put(struct mdev *d, const uint8_t addr[16])
{
	int i = udp6_find(d, addr);
	struct mudp6 *u;

	if (i < 0)
		return;
	u = &d->net.udp6[i];
	if (--u->users)
		return;
	if (d->epfd >= 0)
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, u->rx.fd, NULL);
	if (d->net.blocked_sock == NET_MAX_SOCKS + i)
		d->net.blocked_sock = -1;
	roce_udp_port_close(&u->rx);
	roce_udp_port_close(&u->tx);
}

/* The distinct (type, GID) pairs of the table: what "to ourselves" and "for us" compare with. */
static void own_rebuild(struct mdev *d)
{
	struct mnet *n = &d->net;

	n->nown = 0;
	for (uint32_t i = 0; i < d->roce_tbl_size && n->nown < NET_MAX_OWN; i++) {
		const struct mroce_addr *a = &d->roce[i];
		bool dup = false;

		if (!a->valid)
			continue;
		for (unsigned int k = 0; k < n->nown && !dup; k++)
			dup = n->own[k].net == a->net && !memcmp(n->own[k].gid, a->gid, 16);
		if (dup)
			continue;
		n->own[n->nown].net = a->net;
		memcpy(n->own[n->nown].gid, a->gid, 16);
		n->nown++;
	}
}

static bool is_own(const struct mdev *d, uint8_t net, const uint8_t gid[16])
{
	for (unsigned int k = 0; k < d->net.nown; k++)
		if (d->net.own[k].net == net && !memcmp(d->net.own[k].gid, gid, 16))
			return true;
	return false;
}

/*
 * What the port's media can carry from a GID ([PRM] SET_ROCE_ADDRESS; docs/cx4-model.md):
 *   RoCE v1:        a cable, or the AF_PACKET socket of an Ethernet net device;
 *   RoCE v2 / IPv4: the port's address (its UDP sockets are bound to it);
 *   RoCE v2 / IPv6: an address assigned to the net device (its sockets are opened here), or
 *                   any address over a cable (then only the cable and the loopback carry it).
 */
static int gid_carried(struct mdev *d, const struct mroce_addr *a)
{
	int err;

	switch (a->net) {
	case ROCE_NET_GRH:
		return cx4m_net_has_ethernet(d) ? 0 : -EPROTONOSUPPORT;
	case ROCE_NET_IPV4:
		if (!roce_gid_is_v4mapped(a->gid) || memcmp(a->gid + 12, &d->cfg.ipv4, 4))
			return -EADDRNOTAVAIL;
		return 0;
	default:
		if (roce_gid_is_v4mapped(a->gid))
			return -EINVAL;
		err = udp6_get(d, a->gid);
		return err == -EADDRNOTAVAIL && d->net.cable.rx ? 0 : err;
	}
}

int cx4m_net_gid_set(struct mdev *d, uint32_t idx, const struct mroce_addr *a)
{
	struct mroce_addr *old = &d->roce[idx];
	int err = 0;

	if (a->valid && (err = gid_carried(d, a)))
		return err;
	if (old->valid && old->net == ROCE_NET_IPV6)
		udp6_put(d, old->gid);
	*old = *a;
	own_rebuild(d);
	return 0;
}

void cx4m_net_gids_clear(struct mdev *d)
{
	for (uint32_t i = 0; i < sizeof(d->roce) / sizeof(d->roce[0]); i++)
		if (d->roce[i].valid && d->roce[i].net == ROCE_NET_IPV6)
			udp6_put(d, d->roce[i].gid);
	memset(d->roce, 0, sizeof(d->roce));
	own_rebuild(d);
}

bool cx4m_net_pkt_on_path(const struct mdev *d, const struct roce_pkt *p, const struct mpath *path)
{
	const struct mroce_addr *s = &d->roce[path->sgid_index];

	if (!s->valid || p->addr.net != s->net)
		return false;
	if (s->net == ROCE_NET_IPV4)
		return !memcmp(&p->addr.saddr, path->rgid + 12, 4) &&
		       !memcmp(&p->addr.daddr, s->gid + 12, 4);
	return !memcmp(p->addr.sgid, path->rgid, 16) && !memcmp(p->addr.dgid, s->gid, 16);
}

int cx4m_net_open(struct mdev *d, const char *pcap_path, const char *cable_dir)
{
	struct mnet *n = &d->net;
	struct roce_udp_port_opts o = {.rcvbuf = 8 << 20, .sndbuf = 4 << 20, .gro = true};
	uint16_t p = base_port(d);
	size_t slab;
	int err;

	n->rx_port.fd = -1;
	n->raw.fd = -1;
	for (unsigned int i = 0; i < NET_MAX_UDP6; i++)
		n->udp6[i].rx.fd = n->udp6[i].tx.fd = -1;
	n->blocked_sock = -1;
	err = cx4m_cable_open(d, cable_dir);
	if (err)
		return err;
	n->loop.buf = malloc(NET_LOOP_SIZE);
	if (!n->loop.buf)
		return -ENOMEM;
	raw_open(d);
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
	n->raw_iov = calloc((size_t)ROCE_PACKET_BATCH * (NET_MAX_IOV + 2), sizeof(*n->raw_iov));
	slab =
	    (size_t)NET_TX_SLOTS * NET_SLOT_SIZE + (size_t)NET_RX_SLOTS * NET_RX_BUF + NET_SCRATCH;
	n->slab = malloc(slab);
	if (!n->tx_slot || !n->tx_iov || !n->raw_iov || !n->slab)
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

void cx4m_net_close(struct mdev *d)
{
	struct mnet *n = &d->net;

	cx4m_cable_close(d);
	roce_packet_port_close(&n->raw);
	for (unsigned int i = 0; i < NET_MAX_UDP6; i++) {
		roce_udp_port_close(&n->udp6[i].rx);
		roce_udp_port_close(&n->udp6[i].tx);
		n->udp6[i].users = 0;
	}
	free(n->loop.buf);
	n->loop = (struct mloop){0};
	n->nown = 0;
	roce_udp_port_close(&n->rx_port);
	for (unsigned int i = 0; i < n->ntx; i++)
		roce_udp_port_close(&n->tx[i]);
	n->ntx = 0;
	if (n->pcap)
		roce_pcap_close(n->pcap);
	n->pcap = NULL;
	cx4m_dmab_free(&n->tx_dma);
	for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++) {
		free(n->held[i].buf);
		n->held[i].buf = NULL;
		n->held[i].after = 0;
	}
	n->nfault = 0;
	free(n->tx_slot);
	free(n->tx_iov);
	free(n->raw_iov);
	free(n->slab);
	n->tx_slot = NULL;
	n->tx_iov = NULL;
	n->raw_iov = NULL;
	n->slab = NULL;
}

uint16_t cx4m_net_sport_for(struct mdev *d, uint32_t qpn, uint16_t want, bool av, int *sock)
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
		cx4m_mdev_log(d, "QP 0x%x: UDP source port %u unavailable, using the pool", qpn,
			      want);
	}
	/* rxe picks 0xC000 + hash_32(qpn, 14); we pick one of our sockets by the same idea */
	*sock = (int)(((qpn * 2654435761u) >> 16) %
		      (d->cfg.src_ports < n->ntx ? d->cfg.src_ports : n->ntx));
	return n->tx[*sock].port;
}

uint8_t *cx4m_net_scratch(struct mdev *d, size_t len)
{
	struct mnet *n = &d->net;
	uint8_t *p;

	if (len > NET_SCRATCH)
		return NULL;
	if (n->scratch_used + len > NET_SCRATCH) {
		/* full: the writes that point into it must land before it is reused */
		cx4m_mdev_flush_rx_dma(d);
		n->scratch_used = 0;
	}
	p = n->scratch + n->scratch_used;
	n->scratch_used += (len + 63) & ~(size_t)63;
	return p;
}

/* ---- transmit ----------------------------------------------------------------------------------
 */

unsigned int cx4m_net_tx_free_slots(const struct mdev *d)
{
	return NET_TX_SLOTS - (d->net.tx_tail - d->net.tx_head);
}

struct txpkt *cx4m_net_tx_get(struct mdev *d)
{
	struct txpkt *t;

	if (!cx4m_net_tx_free_slots(d))
		return NULL;
	t = &d->net.tx_slot[d->net.tx_tail % NET_TX_SLOTS];
	t->qp = NULL;
	t->swq_pos = -1;
	t->last = false;
	t->iovcnt = 0;
	t->plen = 0;
	t->faulted = false;
	t->zcopy = false;
	t->route = NET_ROUTE_UNKNOWN;
	return t;
}

int cx4m_net_tx_hdr(struct mdev *d, struct txpkt *t, const struct roce_tx_hdr *h, uint32_t plen,
		    const struct mpath *dst, uint16_t sock)
{
	int hl = roce_write_hdrs(t->hdr, sizeof(t->hdr), h, plen);

	(void)d;
	if (hl < 0)
		return hl;
	t->hlen = (uint8_t)hl;
	t->iov[0] = (struct iovec){.iov_base = t->hdr, .iov_len = (size_t)hl};
	t->iovcnt = 1;
	t->dst = *dst;
	t->sock = sock;
	t->route = NET_ROUTE_UNKNOWN;
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

int cx4m_net_tx_payload(struct mdev *d, struct txpkt *t, const struct dseg *s, int n, uint32_t off)
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
				cx4m_dseg_copy_batched(&d->net.tx_dma, &s[i], 1, t->bounce + off,
						       tag);
			append_bounce(t, off, (uint32_t)s[i].len);
		}
		off += (uint32_t)s[i].len;
		t->plen += (uint32_t)s[i].len;
	}
	return 0;
}

void cx4m_net_tx_copy(struct txpkt *t, const void *src, uint32_t len, uint32_t off)
{
	memcpy(t->bounce + off, src, len);
	append_bounce(t, off, len);
	t->plen += len;
}

void cx4m_net_tx_commit(struct mdev *d, struct txpkt *t)
{
	(void)t;
	d->net.tx_tail++;
}

void cx4m_net_tx_materialize(struct mdev *d)
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

/* ---- leaving: route, headers, media ------------------------------------------------------ */

/* The source GID entry of a packet (valid or not). */
static const struct mroce_addr *src_of(const struct mdev *d, const struct txpkt *t)
{
	return &d->roce[t->dst.sgid_index];
}

/* How the packet leaves (cached in t->route). */
static uint8_t route_of(struct mdev *d, struct txpkt *t)
{
	const struct mroce_addr *s = src_of(d, t);
	int i;

	if (t->route != NET_ROUTE_UNKNOWN)
		return t->route;
	if (!s->valid || !cx4m_net_rgid_ok(s->net, t->dst.rgid))
		t->route = NET_ROUTE_DROP;
	else if (is_own(d, s->net, t->dst.rgid))
		t->route = NET_ROUTE_SELF;
	else if (d->net.cable.peer && !memcmp(t->dst.rmac, d->net.cable.peer_mac, 6))
		t->route = NET_ROUTE_CABLE;
	else if (s->net == ROCE_NET_GRH)
		t->route = d->net.raw.fd >= 0 ? NET_ROUTE_PACKET : NET_ROUTE_DROP;
	else if (s->net == ROCE_NET_IPV4)
		t->route = NET_ROUTE_UDP4;
	else if ((i = udp6_find(d, s->gid)) >= 0) {
		t->route = NET_ROUTE_UDP6;
		t->sock = (uint16_t)i;
	} else {
		t->route = NET_ROUTE_DROP;
	}
	return t->route;
}

/* The UDP source port a RoCE v2 packet carries. */
static uint16_t sport_of(const struct mdev *d, const struct txpkt *t, uint8_t net)
{
	int i;

	if (net == ROCE_NET_IPV4)
		return d->net.tx[t->sock].port;
	if (t->route == NET_ROUTE_UDP6)
		return d->net.udp6[t->sock].tx.port;
	i = udp6_find(d, src_of(d, t)->gid);
	return i >= 0 ? d->net.udp6[i].tx.port : base_port(d);
}

/* The network-layer fields of a packet (segment ip_id of an IPv4 GSO send). */
static void pkt_addr(const struct mdev *d, const struct txpkt *t, uint16_t ip_id,
		     struct roce_addr *a)
{
	const struct mroce_addr *s = src_of(d, t);

	*a = (struct roce_addr){
	    .dport = d->cfg.udp_port,
	    .tos = t->dst.tclass,
	    .ttl = t->dst.hop_limit ? t->dst.hop_limit : 64,
	    .ip_id = ip_id,
	    .flow_label = t->dst.flow_label,
	};
	roce_addr_set_gids(a, s->net, s->gid, t->dst.rgid);
	if (s->net != ROCE_NET_GRH)
		a->sport = sport_of(d, t, s->net);
}

/* UDP payload bytes of a packet: headers, payload, pad to 4, ICRC. */
static uint32_t pkt_len(const struct txpkt *t)
{
	return t->hlen + ((t->plen + 3) & ~3u) + ROCE_ICRC_LEN;
}

/*
 * A packet for a frame medium (loopback, cable, AF_PACKET): its ICRC, and the Ethernet and
 * network headers in t->l2 (with the IPv6 UDP checksum a kernel socket would compute).
 * The frame is t->l2, then t->iov[0..iovcnt] (headers, payload, tail). 0 or -1.
 */
static int frame_build(struct mdev *d, struct txpkt *t, const uint8_t *dmac)
{
	struct roce_addr a;
	int tl, hl;

	pkt_addr(d, t, 0, &a); /* sent alone: IPv4 ID 0 with DF, as from the UDP socket */
	tl = roce_write_tail(t->tail, &a, t->iov, t->iovcnt);
	if (tl < 0)
		return -1;
	t->iov[t->iovcnt] = (struct iovec){.iov_base = t->tail, .iov_len = (size_t)tl};
	hl = roce_eth_hdrs(t->l2, dmac, d->mac, &a, pkt_len(t));
	if (hl < 0)
		return -1;
	if (a.net == ROCE_NET_IPV6)
		roce_udp6_csum(t->l2 + ROCE_ETH_HDR_LEN, t->iov, t->iovcnt + 1);
	t->l2len = (uint8_t)hl;
	return 0;
}

/* The frame's pieces into v (at least iovcnt + 2): returns their number. */
static int frame_iov(const struct txpkt *t, struct iovec *v)
{
	v[0] = (struct iovec){.iov_base = (void *)t->l2, .iov_len = t->l2len};
	memcpy(v + 1, t->iov, (size_t)(t->iovcnt + 1) * sizeof(*v));
	return t->iovcnt + 2;
}

/* The socket behind a blocked_sock number (see struct mnet). */
static int blocked_fd(const struct mnet *n, int sock)
{
	if (sock < NET_MAX_SOCKS)
		return n->tx[sock].fd;
	if (sock < NET_MAX_SOCKS + NET_MAX_UDP6)
		return n->udp6[sock - NET_MAX_SOCKS].tx.fd;
	return n->raw.fd;
}

static void set_epollout(struct mdev *d, int sock)
{
	struct mnet *n = &d->net;
	struct epoll_event ev = {.data.fd = -1};
	int fd;

	if (n->blocked_sock == sock)
		return;
	/* the AF_PACKET socket is in the epoll set for reading: modify, do not add */
	if (n->blocked_sock >= 0 && (fd = blocked_fd(n, n->blocked_sock)) >= 0) {
		if (fd == n->raw.fd) {
			ev = (struct epoll_event){.events = EPOLLIN, .data.fd = fd};
			epoll_ctl(d->epfd, EPOLL_CTL_MOD, fd, &ev);
		} else {
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd, &ev);
		}
	}
	n->blocked_sock = sock;
	if (sock >= 0 && (fd = blocked_fd(n, sock)) >= 0) {
		ev = (struct epoll_event){.events = EPOLLOUT, .data.fd = fd};
		if (fd == n->raw.fd) {
			ev.events |= EPOLLIN;
			epoll_ctl(d->epfd, EPOLL_CTL_MOD, fd, &ev);
		} else {
			epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
		}
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
		struct iovec v[NET_MAX_IOV + 2];

		if (t->route == NET_ROUTE_SELF || t->route == NET_ROUTE_CABLE ||
		    t->route == NET_ROUTE_PACKET) {
			roce_pcap_write_frame(n->pcap, v, frame_iov(t, v));
		} else {
			struct roce_addr a;

			pkt_addr(d, t, ip_id, &a);
			t->iov[t->iovcnt] = (struct iovec){
			    .iov_base = t->tail, .iov_len = pkt_len(t) - t->hlen - t->plen};
			roce_pcap_write_pkt(n->pcap, &a, t->dst.rmac, d->mac, t->iov,
					    t->iovcnt + 1);
		}
	}
	/* UC/UD: a WQE is complete once its last packet has left */
	if (t->qp && t->last && t->swq_pos >= 0 && t->qp->st != CX4_QP_ST_RC)
		cx4m_comp_sent(d, t->qp, (uint32_t)t->swq_pos);
}

/* ---- the device's loopback: a ring of frames to ourselves ----------------------------------- */

#define LOOP_WRAP 0xffffffffu

static uint32_t loop_rec_space(uint32_t len)
{
	return (uint32_t)((sizeof(uint32_t) + len + 7) & ~(uint32_t)7);
}

/* Queue a frame to ourselves: 0, or -EAGAIN when the ring is full (it empties next pass). */
static int loop_put(struct mdev *d, const struct iovec *v, int n, uint32_t len)
{
	struct mloop *l = &d->net.loop;
	uint32_t need = loop_rec_space(len), off = (uint32_t)(l->prod % NET_LOOP_SIZE);
	uint32_t to_end = NET_LOOP_SIZE - off;
	uint8_t *p;

	if (to_end < need) {
		if (NET_LOOP_SIZE - (l->prod - l->cons) < (uint64_t)to_end + need)
			return -EAGAIN;
		memcpy(l->buf + off, &(uint32_t){LOOP_WRAP}, sizeof(uint32_t));
		l->prod += to_end;
		off = 0;
	} else if (NET_LOOP_SIZE - (l->prod - l->cons) < need) {
		return -EAGAIN;
	}
	memcpy(l->buf + off, &len, sizeof(len));
	p = l->buf + off + sizeof(len);
	for (int i = 0; i < n; i++) {
		memcpy(p, v[i].iov_base, v[i].iov_len);
		p += v[i].iov_len;
	}
	l->prod += need;
	d->stats.loop_pkts++;
	return 0;
}

/* The next frame to ourselves (valid until cx4m_net_rx_done), or NULL. */
static const uint8_t *loop_next(struct mdev *d, size_t *len)
{
	struct mloop *l = &d->net.loop;

	while (l->rx != l->prod) {
		uint32_t off = (uint32_t)(l->rx % NET_LOOP_SIZE), n;

		memcpy(&n, l->buf + off, sizeof(n));
		if (n == LOOP_WRAP) {
			l->rx += NET_LOOP_SIZE - off;
			continue;
		}
		l->rx += loop_rec_space(n);
		*len = n;
		return l->buf + off + sizeof(n);
	}
	return NULL;
}

/* ---- the frame media: loopback, cable, AF_PACKET ------------------------------------------- */

/* The packets at the head of the queue that leave by route r, as frames; *full when that
 * medium has no room now (loopback: next pass; cable: its other end wakes us). */
static int tx_frames(struct mdev *d, uint8_t r, bool *full)
{
	struct mnet *n = &d->net;
	struct roce_packet_tx ptx[ROCE_PACKET_BATCH];
	uint32_t pfirst = n->tx_head;
	unsigned int np = 0;
	int sent = 0;

	while (n->tx_head + np != n->tx_tail) {
		struct txpkt *t = &n->tx_slot[(n->tx_head + np) % NET_TX_SLOTS];
		struct iovec v[NET_MAX_IOV + 2];
		const uint8_t *dmac;
		int vn, err = 0;

		if (t->faulted || route_of(d, t) != r)
			break;
		dmac = r == NET_ROUTE_SELF ? d->mac : t->dst.rmac;
		if (frame_build(d, t, dmac)) {
			t->faulted = true;
			break;
		}
		if (r == NET_ROUTE_PACKET) {
			/* collected, then sent in one batch below */
			struct iovec *pv = n->raw_iov + np * (NET_MAX_IOV + 2);

			ptx[np] = (struct roce_packet_tx){.iov = pv, .iovcnt = frame_iov(t, pv)};
			if (++np == ROCE_PACKET_BATCH)
				break;
			continue;
		}
		vn = frame_iov(t, v);
		err = r == NET_ROUTE_SELF ? loop_put(d, v, vn, t->l2len + pkt_len(t))
					  : cx4m_cable_put(d, v, vn, t->l2len + pkt_len(t));
		if (err == -EAGAIN) {
			*full = true;
			/* the loopback ring is given back at the end of this pass: run another
			 * one, which sends the rest (the cable's other end wakes us itself) */
			if (r == NET_ROUTE_SELF && !sent)
				sent = 1;
			break;
		}
		if (err)
			cx4m_mdev_log(d, "%s: %u-byte frame not sent: %s",
				      r == NET_ROUTE_SELF ? "loopback" : "cable",
				      t->l2len + pkt_len(t), strerror(-err));
		else {
			tx_done(d, t, 0);
			sent++;
		}
		n->tx_head++;
	}
	if (r == NET_ROUTE_CABLE)
		cx4m_cable_publish(d);
	if (np) {
		int k = roce_packet_send(&n->raw, ptx, np);

		if (k < 0) {
			cx4m_mdev_log(d, "RoCE v1 send: %s (%u frames dropped)", strerror(-k), np);
			k = (int)np;
		} else {
			for (int i = 0; i < k; i++)
				tx_done(d, &n->tx_slot[(pfirst + (uint32_t)i) % NET_TX_SLOTS], 0);
			d->stats.raw_tx_pkts += (uint64_t)k;
			sent += k;
			if ((unsigned int)k < np) {
				/* the device's queue is full: wait for POLLOUT */
				set_epollout(d, NET_MAX_SOCKS + NET_MAX_UDP6);
				*full = true;
			}
		}
		n->tx_head += (uint32_t)k;
	}
	return sent;
}

/* The socket a packet of route UDP4 / UDP6 leaves from. */
static struct roce_udp_port *udp_sock(struct mnet *n, uint8_t route, uint16_t sock)
{
	return route == NET_ROUTE_UDP6 ? &n->udp6[sock].tx : &n->tx[sock];
}

static bool same_dest(uint8_t route, const struct txpkt *a, const struct txpkt *b)
{
	return route == NET_ROUTE_UDP6 ? !memcmp(a->dst.rgid, b->dst.rgid, 16)
				       : !memcmp(a->dst.rgid + 12, b->dst.rgid + 12, 4);
}

/*
 * RoCE v2 through a UDP socket (route UDP4 or UDP6): runs of equal-size packets to one
 * destination become UDP GSO sends, for IPv6 as for IPv4 (a device queue, a tap's for one,
 * then holds one entry per run instead of one per packet). Over IPv4 segment i leaves with
 * IPv4 ID i, which its ICRC covers; IPv6 has no ID.
 */
static int tx_udp(struct mdev *d, uint8_t route, bool *full)
{
	struct mnet *n = &d->net;
	struct roce_udp_tx tx[ROCE_UDP_BATCH];
	struct txgroup grp[ROCE_UDP_BATCH];
	uint32_t at = n->tx_head, niov = 0;
	uint16_t sock = n->tx_slot[at % NET_TX_SLOTS].sock;
	unsigned int k = 0;
	int r, sent = 0;

	/* groups of equal-size packets to one destination, for one sendmmsg */
	while (at != n->tx_tail && k < ROCE_UDP_BATCH) {
		struct txpkt *f = &n->tx_slot[at % NET_TX_SLOTS];
		uint32_t size = pkt_len(f), bytes = 0, cnt = 0, iov0 = niov;

		if (f->faulted || route_of(d, f) != route || f->sock != sock)
			break;
		while (at != n->tx_tail) {
			struct txpkt *t = &n->tx_slot[at % NET_TX_SLOTS];
			uint32_t len = pkt_len(t);
			struct roce_addr a;
			int tl;

			if (cnt && (t->faulted || route_of(d, t) != route || t->sock != sock ||
				    !same_dest(route, t, f) || t->dst.tclass != f->dst.tclass ||
				    t->dst.hop_limit != f->dst.hop_limit || len > size ||
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
			memcpy(&n->tx_iov[niov], t->iov, (size_t)t->iovcnt * sizeof(*t->iov));
			niov += (uint32_t)t->iovcnt;
			n->tx_iov[niov++] = (struct iovec){.iov_base = t->tail, .iov_len = (size_t)tl};
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
					     .daddr6 = route == NET_ROUTE_UDP6 ? f->dst.rgid : NULL,
					     .dport = d->cfg.udp_port,
					     .tos = f->dst.tclass,
					     .ttl = f->dst.hop_limit,
					     .gso_size = cnt > 1 ? (uint16_t)size : 0};
		memcpy(&tx[k].daddr, f->dst.rgid + 12, 4);
		grp[k].first = at - cnt;
		grp[k].n = cnt;
		k++;
	}
	if (!k)
		return 0;
	r = roce_udp_send(udp_sock(n, route, sock), tx, k);
	if (r < 0) {
		/* EMSGSIZE (over the link MTU) or no route: the network drops it */
		cx4m_mdev_log(d, "send%s: %s (%u packets dropped)",
			      route == NET_ROUTE_UDP6 ? " (IPv6)" : "", strerror(-r), grp[0].n);
		n->tx_head += grp[0].n;
		return 0;
	}
	for (int g = 0; g < r; g++) {
		for (uint32_t i = 0; i < grp[g].n; i++)
			tx_done(d, &n->tx_slot[(grp[g].first + i) % NET_TX_SLOTS], (uint16_t)i);
		n->tx_head += grp[g].n;
		sent += (int)grp[g].n;
	}
	if (route == NET_ROUTE_UDP6)
		d->stats.udp6_tx_pkts += (uint64_t)sent;
	if ((unsigned int)r < k) {
		/* socket buffer full: wait for POLLOUT */
		set_epollout(d, route == NET_ROUTE_UDP6 ? NET_MAX_SOCKS + sock : sock);
		*full = true;
	}
	return sent;
}

int cx4m_net_tx_flush(struct mdev *d)
{
	struct mnet *n = &d->net;
	int sent = 0;

	if (n->tx_head == n->tx_tail) {
		set_epollout(d, -1);
		return 0;
	}
	if (n->tx_dma.n)
		cx4m_dmab_flush(&n->tx_dma, tx_fault, d);
	if (d->port_oper != CX4_PORT_STATUS_UP || !cx4m_vport_roce_enabled(d)) {
		/* no link (or RoCE off): what would go out is lost, as on a card with its cable
		 * pulled; reliable connections find out by their retry counters */
		d->stats.tx_dropped += n->tx_tail - n->tx_head;
		n->tx_head = n->tx_tail;
		set_epollout(d, -1);
		return 0;
	}
	cx4m_cable_peer(d); /* join an end that appeared, let go of one that left */
	while (n->tx_head != n->tx_tail) {
		struct txpkt *t = &n->tx_slot[n->tx_head % NET_TX_SLOTS];
		bool full = false;

		/* a packet whose payload faulted is not sent: its QP learns it */
		if (t->faulted) {
			n->tx_head++;
			if (t->qp)
				cx4m_qp_tx_fault(d, t->qp, t->swq_pos);
			continue;
		}
		switch (route_of(d, t)) {
		case NET_ROUTE_DROP:
			d->stats.tx_dropped++;
			cx4m_mdev_log(d, "packet to a destination no medium reaches (GID entry %u)",
				      t->dst.sgid_index);
			n->tx_head++;
			continue;
		case NET_ROUTE_UDP4:
		case NET_ROUTE_UDP6:
			sent += tx_udp(d, t->route, &full);
			break;
		default:
			sent += tx_frames(d, t->route, &full);
			break;
		}
		if (full)
			break;
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

int cx4m_net_set_fault(struct mdev *d, const struct cx4_model_fault *f)
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
	    f->op_min > f->op_max || f->qpn > ROCE_QPN_MASK ||
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

/* Keep a copy of the datagram (a: its addresses) or frame (a NULL) to deliver later; false
 * when every slot is taken. */
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
		h->frame = !a;
		if (a)
			h->addr = *a;
		h->after = delay;
		return true;
	}
	return false;
}

static void rx_deliver(struct mdev *d, const uint8_t *buf, size_t len,
		       const struct roce_addr *addr, bool late);

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
		copy = cx4m_net_scratch(d, h->len);
		if (!copy)
			continue;
		memcpy(copy, h->buf, h->len);
		d->stats.rx_fault_delayed++;
		rx_deliver(d, copy, h->len, h->frame ? NULL : &h->addr, true);
	}
}

static bool fault_any_held(const struct mdev *d)
{
	for (unsigned int i = 0; i < CX4_MODEL_FAULT_RULES; i++)
		if (d->net.held[i].after)
			return true;
	return false;
}

/* A received datagram (addr: what recvmsg said) or Ethernet frame (addr NULL). */
static void rx_one(struct mdev *d, const uint8_t *buf, size_t len, const struct roce_addr *addr)
{
	if (d->net.rx_cost_us) {
		struct timespec ts = {.tv_nsec = (long)d->net.rx_cost_us * 1000};

		nanosleep(&ts, NULL); /* cx4_model_rx_cost: a slow engine */
	}
	d->stats.rx_pkts++;
	d->stats.rx_bytes += len;
	rx_deliver(d, buf, len, addr, false);
}

/* Parse a datagram or a frame; frames must be for our MAC (or a group address). */
static int rx_parse(struct mdev *d, const uint8_t *buf, size_t len, const struct roce_addr *addr,
		    struct roce_pkt *pkt)
{
	uint8_t dmac[6];
	int err;

	if (addr)
		return roce_parse_udp(buf, len, addr,
				      addr->net == ROCE_NET_IPV4 ? ROCE_PARSE_SOLVE_ID : 0, pkt);
	err = roce_parse_eth(buf, len, 0, pkt, dmac, NULL);
	if (!err && !(dmac[0] & 1) && memcmp(dmac, d->mac, 6))
		return 1; /* another station's frame: the MAC filter drops it */
	return err;
}

/* Parse, check and dispatch one packet; late: a held packet (no rule applies again). */
static void rx_deliver(struct mdev *d, const uint8_t *buf, size_t len,
		       const struct roce_addr *addr, bool late)
{
	struct mnet *n = &d->net;
	const struct cx4_model_fault *rule = NULL;
	struct roce_pkt pkt;
	uint8_t dgid[16];
	struct mqp *qp;
	int err, act;

	err = rx_parse(d, buf, len, addr, &pkt);
	if (n->pcap && !late && err <= 0) {
		struct iovec v = {.iov_base = (void *)buf, .iov_len = len};

		if (addr)
			roce_pcap_write_pkt(n->pcap, err ? addr : &pkt.addr, d->mac, NULL, &v, 1);
		else
			roce_pcap_write_frame(n->pcap, &v, 1);
	}
	if (err) {
		if (err > 0) {
			d->stats.rx_drop_qp++;
			return;
		}
		d->stats.rx_drop_icrc++;
		cx4m_mdev_log(d, "rx: dropped %s: %s", addr ? "datagram" : "frame",
			      roce_strerror(err));
		return;
	}
	/* for one of our GIDs, of the type it arrived as */
	roce_addr_dgid(&pkt.addr, dgid);
	/* QP1 is the GSI QP's wherever its context lives ([IBTA] 13.4.6.1) */
	qp = pkt.dqpn == 1 ? d->gsi : cx4m_qp_get(d, pkt.dqpn);
	if (!is_own(d, pkt.addr.net, dgid) || !qp || !opcode_fits_qp(pkt.opcode, qp->st) ||
	    !cx4m_vport_roce_enabled(d) || d->port_oper != CX4_PORT_STATUS_UP) {
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
	if (act == CX4_MODEL_FAULT_DELAY &&
	    fault_hold(d, buf, len, addr ? &pkt.addr : NULL, rule->delay))
		return;
	for (int k = 0; k < (act == CX4_MODEL_FAULT_DUP ? 2 : 1); k++) {
		if (pkt.info->flags & ROCE_F_REQ)
			cx4m_resp_rx(d, qp, &pkt);
		else
			cx4m_comp_rx(d, qp, &pkt);
	}
	if (act == CX4_MODEL_FAULT_DUP)
		d->stats.rx_fault_duplicated++;
	if (!late && fault_any_held(d))
		fault_release(d, false);
}

/* Frames from the cable's other end and from ourselves (loopback). */
static int rx_frames(struct mdev *d)
{
	const uint8_t *buf;
	size_t len;
	int got = 0;

	cx4m_cable_peer(d); /* join an end that appeared, let go of one that left */
	while (got < CABLE_RX_BATCH && (buf = cx4m_cable_next(d, &len))) {
		rx_one(d, buf, len, NULL);
		got++;
	}
	for (int k = 0; k < CABLE_RX_BATCH && (buf = loop_next(d, &len)); k++, got++)
		rx_one(d, buf, len, NULL);
	return got;
}

/* Datagrams of one UDP socket into rx slots [*used, NET_RX_SLOTS). */
static int rx_udp(struct mdev *d, struct roce_udp_port *port, unsigned int *used)
{
	struct mnet *n = &d->net;
	struct roce_udp_rx rx[NET_RX_SLOTS];
	unsigned int first = *used;
	int got;

	if (port->fd < 0 || first == NET_RX_SLOTS)
		return 0;
	/* headroom in front of each buffer: the responder builds a UD GRH there (resp.c) */
	for (unsigned int i = first; i < NET_RX_SLOTS; i++)
		rx[i - first] = (struct roce_udp_rx){.buf = n->rx_buf[i] + NET_RX_HEADROOM,
						     .size = NET_RX_BUF - NET_RX_HEADROOM};
	got = roce_udp_recv(port, rx, NET_RX_SLOTS - first);
	if (got <= 0)
		return 0;
	*used += (unsigned int)got;
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
			if (port->net == ROCE_NET_IPV6)
				d->stats.udp6_rx_pkts++;
		}
		/* one GSO send's packets (at most 64) are answered before the next */
		cx4m_resp_ack_now(d);
	}
	return got;
}

/* RoCE v1 frames from the net device into rx slots [*used, NET_RX_SLOTS). */
static int rx_raw(struct mdev *d, unsigned int *used)
{
	struct mnet *n = &d->net;
	struct roce_packet_rx rx[NET_RX_SLOTS];
	unsigned int first = *used;
	int got;

	if (n->raw.fd < 0 || first == NET_RX_SLOTS)
		return 0;
	for (unsigned int i = first; i < NET_RX_SLOTS; i++)
		rx[i - first] = (struct roce_packet_rx){.buf = n->rx_buf[i] + NET_RX_HEADROOM,
							.size = NET_RX_BUF - NET_RX_HEADROOM};
	got = roce_packet_recv(&n->raw, rx, NET_RX_SLOTS - first);
	if (got <= 0)
		return 0;
	*used += (unsigned int)got;
	d->stats.raw_rx_pkts += (uint64_t)got;
	for (int i = 0; i < got; i++) {
		if (rx[i].truncated) {
			d->stats.rx_drop_icrc++;
			continue;
		}
		rx_one(d, rx[i].buf, rx[i].len, NULL);
	}
	return got;
}

int cx4m_net_rx(struct mdev *d)
{
	struct mnet *n = &d->net;
	unsigned int used = 0, nsrc = 2 + NET_MAX_UDP6;
	int got = 0, framed = rx_frames(d);

	/* the cable carries the traffic and the sockets had nothing: leave them for a while */
	if (n->cable.peer && !n->sock_look_now && d->now < n->sock_next_look)
		return framed;
	n->sock_look_now = false;
	/* the receive slots of a pass are shared: each pass another source goes first */
	for (unsigned int k = 0; k < nsrc; k++) {
		unsigned int s = (n->rx_turn + k) % nsrc;

		if (s == 0)
			got += rx_udp(d, &n->rx_port, &used);
		else if (s == 1)
			got += rx_raw(d, &used);
		else
			got += rx_udp(d, &n->udp6[s - 2].rx, &used);
	}
	n->rx_turn++;
	n->sock_next_look = got > 0 ? 0 : d->now + NET_SOCK_LOOK_NS;
	if (got <= 0) {
		/* nothing new arrives: the impaired link lets go of what it held */
		if (!framed && fault_any_held(d)) {
			fault_release(d, true);
			return 1;
		}
		if (framed && n->pcap)
			roce_pcap_flush(n->pcap);
		return framed;
	}
	if (n->pcap)
		roce_pcap_flush(n->pcap);
	return got + framed;
}

void cx4m_net_rx_done(struct mdev *d)
{
	cx4m_cable_rx_done(d);
	d->net.loop.cons = d->net.loop.rx;
}

void cx4m_net_sleeping(struct mdev *d, bool sleeping)
{
	cx4m_cable_sleeping(d, sleeping);
	if (!sleeping)
		cx4m_cable_drain_wake(d);
}
